"""Wire format between the microcontroller bridge and the host (COBS frames, CRC-32).

Depends on numpy only. The normative description is SPEC.md beside this file.
"""
