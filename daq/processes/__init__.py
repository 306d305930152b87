"""Pools of this machine's processes, for work that must not stall the process that
starts them: `new_pool` (a long-lived pool: the service's identification processes) and
`local_processes` (one command's pool, stopped at once when the command is). The bottom
layer of daq: it imports only the standard library, so a process of a pool starts fast.
"""

from ._pool import local_processes, new_pool

__all__ = ["local_processes", "new_pool"]
