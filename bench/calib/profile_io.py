"""Reading and writing a hardware profile (hardware/profiles/*.json) from the calibration scripts:
one format for every script (indent 1, UTF-8 kept as is, a final newline) and an atomic write (a
temporary file beside the profile, renamed over it), so that a failed run never leaves half a
profile."""
import json
import os
import tempfile


def read_profile(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def write_profile(path, profile):
    write_json(path, profile)


def write_json(path, data):
    """Any JSON result of the scripts (a profile, a probe's summary) in the same format, atomically."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".profile-", suffix=".json", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1, ensure_ascii=False)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
