#!/usr/bin/env bash
# Rebuilds ../static/vendor from the exact versions pinned in package-lock.json.
# The dashboard is served to offline labs, so the built browser files are checked in;
# this script is only how they were made (and how to refresh them): npm ci, copy the
# dist files and licences, and write VERSIONS.txt with each file's sha256 so a reviewer
# can check that what is served is what npm published.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="$here/../static/vendor"
cd "$here"

# --ignore-scripts: we only copy prebuilt dist files, nothing needs to run.
npm ci --ignore-scripts --no-audit --no-fund

mkdir -p "$out"
nm="$here/node_modules"

# source-in-node_modules -> name-in-static/vendor
copy() { install -m 0644 "$nm/$1" "$out/$2"; }
copy mqtt/dist/mqtt.min.js      mqtt.min.js
copy mqtt/LICENSE.md            mqtt.LICENSE
copy uplot/dist/uPlot.iife.min.js uPlot.iife.min.js
copy uplot/dist/uPlot.min.css   uPlot.min.css
copy uplot/LICENSE              uPlot.LICENSE

version() { node -p "require('$nm/$1/package.json').version"; }
mqtt_v="$(version mqtt)"
uplot_v="$(version uplot)"

{
  echo "# Vendored browser libraries of the hilrig dashboard; written by daq/dashboard/vendor/build.sh."
  echo "# package  version  file  sha256"
  for f in mqtt.min.js mqtt.LICENSE; do
    echo "mqtt  $mqtt_v  $f  $(sha256sum "$out/$f" | cut -d' ' -f1)"
  done
  for f in uPlot.iife.min.js uPlot.min.css uPlot.LICENSE; do
    echo "uplot  $uplot_v  $f  $(sha256sum "$out/$f" | cut -d' ' -f1)"
  done
} > "$out/VERSIONS.txt"

echo "static/vendor: mqtt $mqtt_v, uplot $uplot_v"
