"""nvidia-smi sampling the SM clock, board power and temperature in the background, each sample
stamped with the host's clock (time.time()) when it arrives, so that a script can ask for the
samples of a window it timed itself. Used by attention_power.py and instep_gemms.py; read_csv() gives
the same samples from an nvidia-smi log written beside a run (bench/calib/probe_common.sh), for
bench/calib/hold_probe_summary.py."""
import datetime
import statistics
import subprocess
import threading
import time

FIELDS = ("clocks.sm", "power.draw", "temperature.gpu")


def window(samples, t0, t1):
    """The samples of [t0, t1] (host seconds), as (time, MHz, W, °C) tuples."""
    return [s for s in samples if t0 <= s[0] <= t1]


def read_csv(path):
    """The (time, MHz, W, °C) samples of an nvidia-smi CSV log whose first four columns are timestamp
    (UTC, as the device machines keep it), clocks.sm, power.draw and temperature.gpu; unreadable rows
    ("[N/A]", a partial last line) are skipped."""
    out = []
    with open(path) as f:
        next(f, None)  # the header
        for line in f:
            p = [x.strip() for x in line.split(",")]
            try:
                ts = datetime.datetime.strptime(p[0], "%Y/%m/%d %H:%M:%S.%f").replace(tzinfo=datetime.timezone.utc)
                out.append((ts.timestamp(), float(p[1].split()[0]), float(p[2].split()[0]), float(p[3])))
            except (ValueError, IndexError):
                continue
    return out


class SmiSampler:
    def __init__(self, interval_ms=100):
        if not 20 <= interval_ms <= 1000:
            raise ValueError(f"interval_ms must be in [20, 1000], not {interval_ms}")
        self.samples = []  # (host time, SM MHz, board W, °C)
        self._lock = threading.Lock()
        self._p = subprocess.Popen(["nvidia-smi", "--query-gpu=" + ",".join(FIELDS), "--format=csv,noheader,nounits",
                                    "-lms", str(int(interval_ms))], stdout=subprocess.PIPE, text=True)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        for line in self._p.stdout:
            try:
                mhz, watts, temp = (float(x) for x in line.strip().split(","))
            except ValueError:
                continue  # "[N/A]" or a partial line
            with self._lock:
                self.samples.append((time.time(), mhz, watts, temp))

    def window(self, t0, t1):
        """The samples that arrived in [t0, t1] (host seconds), as (time, MHz, W, °C) tuples."""
        with self._lock:
            return window(self.samples, t0, t1)

    def summary(self, t0, t1, center=statistics.mean, min_samples=1):
        """{samples, sm_mhz, power_w, temperature_c} of the window (`center`: mean or median), or None
        when fewer than `min_samples` arrived in it."""
        w = self.window(t0, t1)
        if len(w) < max(1, min_samples):
            return None
        return {"samples": len(w), "sm_mhz": center(s[1] for s in w), "power_w": center(s[2] for s in w),
                "temperature_c": center(s[3] for s in w)}

    def close(self):
        self._p.terminate()
        self._p.wait()
        self._reader.join(timeout=2)
