"""Writes OUT.tar: `a.txt`, then `s.env` whose header's size field lies
(SIZE: 0, 10 or huge = 8 GiB) while its data is 600 `x`s, a newline and
SECRET, then `after.txt`.

    python3 lying_tar.py OUT.tar SIZE SECRET
"""
import sys
import tarfile

out, size, secret = sys.argv[1], sys.argv[2], sys.argv[3]


def header(name, field):
    b = bytearray(tarfile.TarInfo(name).tobuf(format=tarfile.USTAR_FORMAT))
    b[124:136] = field
    b[148:156] = b' ' * 8
    b[148:156] = ('%06o\0 ' % sum(b)).encode()
    return bytes(b)


def pad(data):
    return data + bytes(-len(data) % 512)


field = b'%012o' % (8 << 30) if size == 'huge' else b'%011o\0' % int(size)
data = b'x' * 600 + b'\n' + secret.encode()
tar = header('a.txt', b'%011o\0' % 6) + pad(b'alpha\n')
tar += header('s.env', field) + pad(data)
tar += header('after.txt', b'%011o\0' % 6) + pad(b'after\n') + bytes(1024)
open(out, 'wb').write(tar)
