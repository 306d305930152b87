"""Acquisition service: ring buffer, trigger, capture files, MQTT publication, config, CLI."""
