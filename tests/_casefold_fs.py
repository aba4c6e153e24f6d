"""A case-insensitive, case-preserving file system (as on macOS and Windows) for tests: a
FUSE passthrough over a backing folder in which every path component is matched without
regard to letter case, and a new name keeps the case it was given.

    python tests/_casefold_fs.py BACKING MOUNTPOINT     # foreground; stop with fusermount -u

Needs libfuse 2 (Debian: libfuse2, fuse) and the `fusepy` package;
tests/integration/test_case_insensitive.py mounts it when both are there.
"""

from __future__ import annotations

import errno
import os
import sys
from typing import Any

from fuse import FUSE, FuseOSError, Operations  # type: ignore[import-untyped]


class CaseFolding(Operations):  # type: ignore[misc]
    def __init__(self, backing: str) -> None:
        self.backing = os.path.realpath(backing)

    # --- names ---------------------------------------------------------------------------

    def _real(self, path: str, create: bool = False) -> str:
        """The backing path `path` names: each component as the disk spells it; the last one
        as given when it does not exist yet (with `create`)."""
        here = self.backing
        parts = [p for p in path.split("/") if p]
        for i, part in enumerate(parts):
            try:
                names = os.listdir(here)
            except OSError:
                names = []
            if part not in names:
                folded = [n for n in names if n.casefold() == part.casefold()]
                if folded:
                    part = folded[0]
                elif not (create and i == len(parts) - 1):
                    return os.path.join(here, part, *parts[i + 1 :])  # missing: ENOENT below
            here = os.path.join(here, part)
        return here

    # --- files and folders -----------------------------------------------------------------

    def getattr(self, path: str, fh: Any = None) -> dict[str, Any]:
        st = os.lstat(self._real(path))
        keys = ("st_atime", "st_ctime", "st_gid", "st_ino", "st_mode", "st_mtime", "st_nlink", "st_size", "st_uid")
        out = {k: getattr(st, k) for k in keys}
        out.update(st_atime=st.st_atime_ns / 1e9, st_mtime=st.st_mtime_ns / 1e9, st_ctime=st.st_ctime_ns / 1e9)
        return out

    def readdir(self, path: str, fh: Any) -> list[str]:
        return [".", "..", *os.listdir(self._real(path))]

    def access(self, path: str, mode: int) -> None:
        if not os.access(self._real(path), mode):
            raise FuseOSError(errno.EACCES)

    def chmod(self, path: str, mode: int) -> None:
        os.chmod(self._real(path), mode)

    def chown(self, path: str, uid: int, gid: int) -> None:
        os.chown(self._real(path), uid, gid)

    def mkdir(self, path: str, mode: int) -> None:
        real = self._real(path, create=True)
        if os.path.lexists(real):
            raise FuseOSError(errno.EEXIST)
        os.mkdir(real, mode)

    def rmdir(self, path: str) -> None:
        os.rmdir(self._real(path))

    def unlink(self, path: str) -> None:
        os.unlink(self._real(path))

    def rename(self, old: str, new: str) -> None:
        os.rename(self._real(old), self._real(new, create=True))

    def link(self, target: str, source: str) -> None:
        os.link(self._real(source), self._real(target, create=True))

    def symlink(self, target: str, source: str) -> None:
        os.symlink(source, self._real(target, create=True))

    def readlink(self, path: str) -> str:
        return os.readlink(self._real(path))

    def utimens(self, path: str, times: Any = None) -> None:
        os.utime(self._real(path), times)

    def statfs(self, path: str) -> dict[str, Any]:
        sv = os.statvfs(self._real(path))
        keys = ("f_bavail", "f_bfree", "f_blocks", "f_bsize", "f_favail", "f_ffree", "f_files", "f_flag", "f_frsize")
        return {k: getattr(sv, k) for k in keys} | {"f_namemax": sv.f_namemax}

    # --- contents --------------------------------------------------------------------------

    def open(self, path: str, flags: int) -> int:
        return os.open(self._real(path), flags)

    def create(self, path: str, mode: int, fi: Any = None) -> int:
        return os.open(self._real(path, create=True), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)

    def read(self, path: str, size: int, offset: int, fh: int) -> bytes:
        return os.pread(fh, size, offset)

    def write(self, path: str, data: bytes, offset: int, fh: int) -> int:
        return os.pwrite(fh, data, offset)

    def truncate(self, path: str, length: int, fh: Any = None) -> None:
        if fh is not None:
            os.ftruncate(fh, length)
        else:
            os.truncate(self._real(path), length)

    def flush(self, path: str, fh: int) -> None:
        pass

    def fsync(self, path: str, datasync: int, fh: int) -> None:
        os.fsync(fh)

    def release(self, path: str, fh: int) -> None:
        os.close(fh)


def _errno_passthrough(method: Any) -> Any:
    def call(*args: Any) -> Any:
        try:
            return method(*args)
        except FuseOSError:
            raise
        except OSError as exc:
            raise FuseOSError(exc.errno or errno.EIO) from None

    return call


for _name in [n for n in vars(CaseFolding) if not n.startswith("_")]:
    setattr(CaseFolding, _name, _errno_passthrough(getattr(CaseFolding, _name)))


if __name__ == "__main__":
    backing, mountpoint = sys.argv[1], sys.argv[2]
    # No attribute caching: a file another process just grew (SQLite's -shm, mapped) is seen at
    # its size at once.
    FUSE(
        CaseFolding(backing),
        mountpoint,
        foreground=True,
        allow_other=True,
        attr_timeout=0,
        entry_timeout=0,
        negative_timeout=0,
    )
