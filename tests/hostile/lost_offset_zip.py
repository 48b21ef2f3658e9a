"""Writes OUT.zip holding `a.txt` and `s.env` (SECRET), whose central
directory entry for `s.env` says its local header is at 2^31, outside the
file.

    python3 lost_offset_zip.py OUT.zip SECRET
"""
import struct
import sys
import zipfile

out, secret = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(out, 'w', zipfile.ZIP_DEFLATED) as z:
    z.writestr('a.txt', 'alpha\n')
    z.writestr('s.env', secret)
data = bytearray(open(out, 'rb').read())
entry = data.rindex(b'PK\x01\x02')
data[entry + 42:entry + 46] = struct.pack('<I', 1 << 31)
open(out, 'wb').write(data)
