"""Available memory (MemAvailable, cgroup v1/v2 limits, RLIMIT_AS) and the pre-allocation check."""

from __future__ import annotations

import os

import numpy as np


def _read_int(path: str) -> int | None:
    """Integer content of a cgroup / proc file, ``None`` if missing or ``"max"``."""
    try:
        with open(path) as fh:
            text = fh.read().strip()
    except OSError:
        return None
    try:
        return int(text)
    except ValueError:  # "max": no limit
        return None


#: Where cgroup hierarchies are mounted (module constants so tests can point
#: them at a fake tree): v2 (``unified`` in hybrid mode) and the v1 memory
#: controller, and the file listing this process's cgroups.
_CGROUP_V2_ROOTS = ("/sys/fs/cgroup", "/sys/fs/cgroup/unified")
_CGROUP_V1_ROOTS = ("/sys/fs/cgroup/memory",)
_PROC_SELF_CGROUP = "/proc/self/cgroup"


def _cgroup_dirs() -> list[tuple[str, str, str]]:
    """``(directory, limit file, usage file)`` of this process's memory cgroup and
    of its ancestors (a limit set on a parent applies too), v2 and v1."""
    v2, v1 = [], []
    try:
        with open(_PROC_SELF_CGROUP) as fh:
            for line in fh:
                parts = line.rstrip("\n").split(":", 2)
                if len(parts) != 3:
                    continue
                _, controllers, path = parts
                if controllers == "":
                    v2.append(path)
                elif "memory" in controllers.split(","):
                    v1.append(path)
    except OSError:  # pragma: no cover - not Linux
        pass
    out = []
    for roots, paths, files in (
        (_CGROUP_V2_ROOTS, v2 or ["/"],
         ("memory.max", "memory.current")),
        (_CGROUP_V1_ROOTS, v1 or ["/"],
         ("memory.limit_in_bytes", "memory.usage_in_bytes")),
    ):
        for root in roots:
            for path in paths:
                parts = [p for p in path.split("/") if p]
                # inside a container the namespace root is the container's cgroup
                for k in range(len(parts), -1, -1):
                    out.append(("/".join([root] + parts[:k]),) + files)
    return out


def _cgroup_available() -> int | None:
    """Bytes left under the tightest cgroup memory limit (v2 ``memory.max -
    memory.current``, v1 ``memory.limit_in_bytes - memory.usage_in_bytes``,
    over the process's cgroup and its ancestors), ``None`` without a limit."""
    best = None
    for base, limit_file, usage_file in _cgroup_dirs():
        limit = _read_int(f"{base}/{limit_file}")
        # "max" (v2) or a huge number near PAGE_COUNTER_MAX (v1) mean no limit
        if limit is None or limit >= 1 << 60:
            continue
        left = max(0, limit - (_read_int(f"{base}/{usage_file}") or 0))
        best = left if best is None else min(best, left)
    return best


def _address_space_available() -> int | None:
    """Bytes of address space left under ``RLIMIT_AS`` (``ulimit -v``): the soft
    limit minus ``VmSize``; ``None`` without a limit."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY or soft < 0:
        return None
    used = 0
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmSize:"):
                    used = int(line.split()[1]) * 1024
                    break
    except OSError:  # pragma: no cover - no procfs
        pass
    return max(0, soft - used)


def available_memory() -> int:
    """Bytes that a new allocation can take now: the smallest of the limits that apply.

    - ``MemAvailable`` of ``/proc/meminfo`` (physical memory as a fallback);
    - the cgroup limit of this process (v2 ``memory.max - memory.current``,
      v1 ``memory.limit_in_bytes - memory.usage_in_bytes``), as containers
      and batch schedulers set it;
    - ``RLIMIT_AS`` (``ulimit -v``) minus the current ``VmSize``.
    """
    limits = []
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    limits.append(int(line.split()[1]) * 1024)
                    break
    except OSError:  # pragma: no cover - not Linux
        pass
    if not limits:
        try:
            limits.append(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
        except (ValueError, OSError, AttributeError):  # pragma: no cover
            limits.append(1 << 62)
    for extra in (_cgroup_available(), _address_space_available()):
        if extra is not None:
            limits.append(extra)
    return min(limits)


def check_memory(shape, dtype, what: str, hint: str = "", *, factor: float = 1.0,
                 extra: int = 0) -> None:
    """Raise ``MemoryError`` before allocating an array that cannot fit.

    The need is ``factor`` times the array's size plus ``extra`` bytes (the
    peak of the computation the array is for); it is compared with
    :func:`available_memory`.  ``what`` names the array (and the parameters
    behind its size) in the message; ``hint`` says what to do instead.
    """
    nbytes = float(np.prod(shape, dtype=np.float64)) * np.dtype(dtype).itemsize
    need = factor * nbytes + extra
    avail = available_memory()
    if need > avail:
        peak = "" if factor == 1.0 and not extra else f" (peak of the fit {need / 2**30:.2f} GiB)"
        raise MemoryError(
            f"{what} of shape {tuple(shape)} needs {nbytes / 2**30:.2f} GiB{peak} but only "
            f"{avail / 2**30:.2f} GiB are available{'; ' + hint if hint else ''}"
        )
