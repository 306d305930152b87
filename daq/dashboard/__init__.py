"""The live lab dashboard: a single page, served from the package, that reads the rig
from the broker over MQTT over WebSockets (docs/mqtt.md is all it relies on).

Above mqtt and config; beside runtime. The page itself is static/ (our modules, and
MQTT.js and uPlot vendored from npm with their licences: vendor/build.sh rebuilds them).
"""

from ._page_config import WS_PORT, WSS_PORT, BrokerEndpoint, PageConfig, page_config, page_gate
from ._server import STATIC_DIR, DashboardServer, parse_http_address, serving

__all__ = [
    "STATIC_DIR", "WSS_PORT", "WS_PORT", "BrokerEndpoint", "DashboardServer", "PageConfig",
    "page_config", "page_gate", "parse_http_address", "serving",
]
