"""hilrig's acquisition side: from a sample source to captures, archives, results and MQTT.

Subpackages, from the bottom layer up (each imports only those below it):

- `daq.config`: settings (TOML, environment) and one-line validation errors;
- `daq.acquisition`: the engine: source -> ring buffer -> trigger -> captures, as events;
- `daq.storage`: capture files (HDF5, CSV), the catalog, the archive layout, the outbox;
- `daq.mqtt`: the MQTT contract: topics, payloads, the courier, commands, jobs, broker;
- `daq.runtime`: what drives the engine and consumes its events: a plain run, sessions,
  the daemon, identification (pool, offload, worker), re-identification, releasers;
- `daq.api`: the Python API for notebooks (`hilrig.fit`, `hilrig.read`, `hilrig.catalog`),
  beside the runtime, on storage and acquisition;
- `daq.cli`: the `hilrig` command; the only place that builds concrete sources.

Below them all, `daq.processes`: pools of this machine's processes (standard library only).

Importing `daq` imports none of them.
"""
