# Simulates the e4m3 producer's V transpose (E4M3Transpose.cpp,
# transposeValueTile) byte by byte from the PTX ISA's ldmatrix.trans /
# prmt / stmatrix definitions, lane by lane with the C++'s own address
# expressions (readBase, row, writeBase, the selectors, piecesOf, the
# xors of c0 and h, the immediates), over a 1024-aligned shared-memory
# base, both stages and partial last rounds: every block_n multiple of 32
# up to 256 and every Dv multiple of 16 up to 256. Checks Vt against
# #fa.tma_shared keyMajor's sigma, every byte written once, and that each
# ldmatrix matrix's and stmatrix matrix's eight rows fall in eight
# different 16-byte chunks (conflict-free). A change to the C++ formulas
# must be made here too. CPU only (~15 s; a lit test):
#   python3 scripts/fp8-transpose-sim.py
import random
def prmt(a,b,sel):
    bs=[(a>>(8*i))&255 for i in range(4)]+[(b>>(8*i))&255 for i in range(4)]
    return sum(bs[(sel>>(4*i))&7]<<(8*i) for i in range(4))
def pieces(chunks):
    out=[]; c0=0; n=4
    while n>=1:
        while chunks-c0>=n: out.append((c0,n)); c0+=n
        n//=2
    return out
def run(Dv,BN,stage,stages=2):
    R=128
    stagingPanels=(Dv+127)//128; valuePanels=(BN+127)//128
    stagingStage=stagingPanels*BN*R; valueStage=valuePanels*Dv*R
    base=1024*7  # smem window base, 1024-aligned
    valueOffset=4096*3; stagingOffset=valueOffset+stages*valueStage
    mem=bytearray(stagingOffset+stages*stagingStage+64)
    writes=[0]*len(mem)
    V=[[random.randrange(256) for _ in range(Dv)] for _ in range(BN)]
    S0=stagingOffset+stage*stagingStage
    for r in range(BN):
        for col in range(Dv):
            p,c,b=col//128,(col%128)//16,col%16
            mem[S0+p*BN*R+r*R+((c^(r%8))*16)+b]=V[r][col]
    staging=base+stagingOffset+stage*stagingStage
    transposed=base+valueOffset+stage*valueStage
    steps=BN//32; spw=-(-steps//4)
    for warp in range(4):
        lanes=range(32)
        rowInMatrix=[L%8 for L in lanes]; matrix=[L//8 for L in lanes]
        readBase=[staging+((warp*32+rowInMatrix[L])*R+((matrix[L]^rowInMatrix[L])*16)) for L in lanes]
        row=[rowInMatrix[L]*2+((matrix[L]^(L//4))%2) for L in lanes]
        writeBase=[transposed+(((matrix[L]//2)*16+row[L])*R+(((warp*2)^(row[L]%8))*16)) for L in lanes]
        swapped=[L//16 for L in lanes]
        ev=[0x6420+swapped[L]*0x1111 for L in lanes]; od=[0x7531-swapped[L]*0x1111 for L in lanes]
        for a in range(spw):
            if warp>=min(4,steps-a*4): continue
            for h in range(2):
                writeAt=[w^(16*h) for w in writeBase]
                panel=0
                while panel*128<Dv:
                    chunks=min(8,(Dv-128*panel)//16)
                    for c0,n in pieces(chunks):
                        readAt=[r^(16*c0) for r in readBase]
                        ro=panel*BN*R+(128*a+16*h)*R
                        def ldm(off):
                            regs=[[0]*n for _ in lanes]
                            for q in range(n):
                                rows=[readAt[8*q+i]+off-base for i in range(8)]
                                assert len({(x%128)//16 for x in rows})==8, 'ldmatrix bank conflict'
                                for T in lanes:
                                    lo=mem[rows[2*(T%4)]+2*(T//4):][:2]; hi=mem[rows[2*(T%4)+1]+2*(T//4):][:2]
                                    regs[T][q]=int.from_bytes(bytes(lo)+bytes(hi),'little')
                            return regs
                        low=ldm(ro); high=ldm(ro+8*R)
                        for q0 in range(0,n,2):
                            words=[[] for _ in lanes]
                            for T in lanes:
                                for q in range(q0,min(q0+2,n)):
                                    words[T].append(prmt(low[T][q],high[T][q],ev[T]))
                                    words[T].append(prmt(low[T][q],high[T][q],od[T]))
                            mats=len(words[0]); off=16*(8*panel+c0+q0)*R+a*Dv*R
                            for j in range(mats):
                                rows=[writeAt[8*j+i]+off-base for i in range(8)]
                                assert len({(x%128)//16 for x in rows})==8, 'stmatrix bank conflict'
                                for T in lanes:
                                    ad=rows[T//4]+4*(T%4)
                                    for k in range(4):
                                        mem[ad+k]=(words[T][j]>>(8*k))&255; writes[ad+k]+=1
                    panel+=1
    T0=valueOffset+stage*valueStage
    for d in range(Dv):
        for p in range(BN):
            q=p%32; hh,t,u,e=q//16,(q%16)//4,(q%4)//2,q%2
            key=(p//32)*32+16*hh+8*u+2*t+e
            pn,pp=p//128,p%128
            ad=T0+pn*Dv*R+d*R+(((pp//16)^(d%8))*16)+pp%16
            assert mem[ad]==V[key][d],(Dv,BN,d,p)
            assert writes[ad]==1
    assert sum(writes)==Dv*BN,(Dv,BN,sum(writes))
random.seed(2)
for BN in range(32, 257, 32):
    for Dv in range(16, 257, 16):
        for stage in (0, 1):
            run(Dv, BN, stage)
    print(f"block_n {BN}: Dv 16..256, both stages: Vt matches sigma, bytes once, conflict-free")
