"""Progress lines on standard error for long fits."""

from __future__ import annotations

import numbers
import sys
import time



class Progress:
    """One line per iteration / fold / grid point on stderr, when ``verbose``.

    ``Progress(verbose, "HARFECV")`` then ``.line("fold 2/5", error=0.12)``
    prints ``[HARFECV] fold 2/5  1.3 s  error 0.12``.  ``verbose`` 0/False
    prints nothing; ints above 1 are for the estimator to print more detail.
    """

    def __init__(self, verbose, name: str, stream=None):
        if isinstance(verbose, bool) or not isinstance(verbose, numbers.Integral) \
                or verbose < 0:
            if not isinstance(verbose, bool):
                raise ValueError(f"verbose must be a bool or an int >= 0, got {verbose!r}")
        self.level = int(verbose)
        self.name = name
        self.stream = stream
        self.t0 = time.perf_counter()

    def __bool__(self):
        return self.level > 0

    def line(self, what: str, *, error: float | None = None, level: int = 1) -> None:
        if self.level < level:
            return
        msg = f"[{self.name}] {what}  {time.perf_counter() - self.t0:.1f} s"
        if error is not None:
            msg += f"  error {error:.4g}"
        print(msg, file=self.stream or sys.stderr, flush=True)
