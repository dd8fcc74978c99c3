# Timing-only PTX hacks of the e4m3 producer transpose (results are WRONG by design):
#  h1: the per-ldmatrix swizzle xor replaced by an immediate offset
#  h2: h1 and the prmts dropped (stmatrix stores ldmatrix's registers)
#  h3: no ldmatrix / prmt / stmatrix at all (the producer only waits and arrives)
import re, sys
src, dst, mode = sys.argv[1], sys.argv[2], sys.argv[3]
lines = open(src).read().split('\n')
out = []
i = 0
xor_re = re.compile(r'^\s*xor\.b32\s+(%r\d+), (%r\d+), (16|32|48|64|80|96|112);$')
alias = {}
for idx, l in enumerate(lines):
    m = xor_re.match(l)
    if m and mode in ('h1', 'h2', 'h3'):
        # only xors feeding ldmatrix (checked below by use)
        alias[m.group(1)] = (m.group(2), int(m.group(3)))
        out.append(None); continue
    out.append(l)
res = []
for l in out:
    if l is None: continue
    if 'ldmatrix' in l:
        m = re.search(r'\[(%r\d+)\+(\d+)\]', l)
        if m and m.group(1) in alias:
            b, off = alias[m.group(1)]
            l = l.replace(m.group(0), '[%s+%d]' % (b, int(m.group(2)) + off))
    res.append(l)
text = '\n'.join(res)
# any xor alias left used elsewhere? then restore (fail loudly)
for r in alias:
    if re.search(re.escape(r) + r'\b', text):
        sys.exit('alias %s still used' % r)
if mode in ('h2', 'h3'):
    # prmt d, a, b, sel -> mov d, a
    text = re.sub(r'prmt\.b32 (%r\d+), (%r\d+), (%r\d+), (%r\d+);', r'mov.b32 \1, \2;', text)
if mode == 'h3':
    text = re.sub(r'ldmatrix\.sync\.aligned\.m8n8\.x4\.trans\.shared\.b16 \{(%r\d+), (%r\d+), (%r\d+), (%r\d+)\}, \[[^\]]*\];',
                  r'mov.b32 \1, 0; mov.b32 \2, 0; mov.b32 \3, 0; mov.b32 \4, 0;', text)
    text = re.sub(r'stmatrix\.sync\.aligned\.m8n8\.x4\.shared\.b16 \[[^\]]*\], \{[^}]*\};', '', text)
open(dst, 'w').write(text)
