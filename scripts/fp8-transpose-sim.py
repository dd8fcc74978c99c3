# Simulates the e4m3 producer's V transpose (HopperSchedule.cpp,
# transposeValueTile) byte by byte from the PTX ISA's definitions: the
# 4-byte form (ld.shared.b32 / prmt / st.shared.b32) and the ldmatrix.trans /
# prmt / stmatrix form; checks both write the same Vt, every byte once, and
# that Vt matches #fa.tma_shared keyMajor's sigma. CPU only:
#   python3 scripts/fp8-transpose-sim.py
import random
def prmt(a,b,sel):
    bs=[(a>>(8*i))&255 for i in range(4)]+[(b>>(8*i))&255 for i in range(4)]
    return sum(bs[(sel>>(4*i))&7]<<(8*i) for i in range(4))
def run(Dv, BN):
    V=[[random.randrange(256) for _ in range(Dv)] for _ in range(BN)]
    stagingPanels=(Dv+127)//128
    S=bytearray(stagingPanels*BN*128)
    for r in range(BN):
        for col in range(Dv):
            p,c,b=col//128,(col%128)//16,col%16
            S[p*BN*128+r*128+((c^(r%8))*16)+b]=V[r][col]
    def ld32(addr): return int.from_bytes(S[addr:addr+4],'little')
    valuePanels=BN//128
    old=bytearray(valuePanels*Dv*128); new=bytearray(len(old))
    wold=[0]*len(old); wnew=[0]*len(old)
    def st32(buf,w,addr,val):
        for i in range(4): buf[addr+i]=(val>>(8*i))&255; w[addr+i]+=1
    steps=BN//32//4; groups=Dv//16
    # today's form (HopperSchedule.cpp transposeValueTile)
    for tid in range(128):
        warp,lane=tid//32,tid%32; h,t,cc=lane//16,(lane//4)%4,lane%4
        firstKey=warp*32+h*16+t*2
        kK=[0,1,8,9]
        readBase=[(firstKey+kK[w])*128+cc*4 for w in range(4)]
        readSw=[(t*2+(kK[w]&1))*16 for w in range(4)]
        pc=warp*2+h; writeBase=[]
        for k in range(4):
            row=cc*4+k; chunk=pc^(row%8); writeBase.append(row*128+chunk*16+t*4)
        for a in range(steps):
            for m in range(groups):
                const=(m//8)*BN*128+a*32*4*128
                words=[ld32(readBase[w]+(readSw[w]^((m%8)*16))+const) for w in range(4)]
                l01=prmt(words[0],words[1],0x5140); h01=prmt(words[0],words[1],0x7362)
                l23=prmt(words[2],words[3],0x5140); h23=prmt(words[2],words[3],0x7362)
                cw=[prmt(l01,l23,0x5410),prmt(l01,l23,0x7632),prmt(h01,h23,0x5410),prmt(h01,h23,0x7632)]
                for k in range(4): st32(old,wold,writeBase[k]+a*Dv*128+m*16*128,cw[k])
    # the ldmatrix / stmatrix form, per warp
    conflicts=[]
    for warp in range(4):
        for a in range(steps):
            s=warp+4*a
            for m in range(groups):
                # ldmatrix.x4.trans: lane L gives row L%8 of matrix L/8
                rowaddr={}
                for L in range(32):
                    q=L//8; h,half=q//2,q%2; key=32*s+16*h+8*half+L%8
                    rowaddr[(q,L%8)]=(m//8)*BN*128+key*128+(((m%8)^(key%8))*16)
                regs={}
                for T in range(32):
                    for q in range(4):
                        # .trans: elements (row 2(T%4), col T/4), (row 2(T%4)+1, col T/4)
                        e0=S[rowaddr[(q,2*(T%4))]+2*(T//4):][:2]; e1=S[rowaddr[(q,2*(T%4)+1)]+2*(T//4):][:2]
                        regs[(T,q)]=int.from_bytes(bytes(e0)+bytes(e1),'little')
                words={}
                for T in range(32):
                    r=[regs[(T,q)] for q in range(4)]
                    # the kernel's run-time selectors: 0x6420 / 0x7531, swapped
                    # (0x1111 apart) for lanes 16 .. 31
                    even=0x6420+(T//16)*0x1111; odd=0x7531-(T//16)*0x1111
                    words[T]=[prmt(r[0],r[1],even),prmt(r[0],r[1],odd),prmt(r[2],r[3],even),prmt(r[2],r[3],odd)]
                # stmatrix.x4: lane L gives row L%8 of matrix L/8; thread T stores
                # (row T/4, cols 2(T%4), 2(T%4)+1) of each matrix from its reg q.
                # Matrix (h, parity) holds Vt rows 2i + (parity ^ (i >= 4)): rows
                # of all eight residues mod 8, so its eight 16-byte rows fall in
                # eight chunks (conflict-free); threads T >= 16 (i >= 4) hold
                # their two columns' words swapped (the selectors above).
                for q in range(4):
                    h,parity=q//2,q%2
                    lanes=set()
                    for T in range(32):
                        i=T//4; flip=1 if i>=4 else 0
                        d=16*m+2*i+(parity^flip); chunk=(2*s+h)%8
                        addr=(s//4)*Dv*128+d*128+((chunk^(d%8))*16)+4*(T%4)
                        lanes.add((addr%128)//16)
                        st32(new,wnew,addr,words[T][q])
                    conflicts.append(8//len(lanes))
    # the spec: Vt[d][p] = V[sigma(p)][d], swizzled
    ok=True
    for d in range(Dv):
        for p in range(BN):
            q=p%32; h,t,u,e=q//16,(q%16)//4,(q%4)//2,q%2
            key=(p//32)*32+16*h+8*u+2*t+e
            panel,pp=p//128,p%128
            addr=panel*Dv*128+d*128+(((pp//16)^(d%8))*16)+pp%16
            if old[addr]!=V[key][d]: ok=False
    print(f"BN={BN} Dv={Dv}: old matches the spec: {ok}; new == old: {new==old}; writes once: old {set(wold)} new {set(wnew)}; stmatrix ways: {set(conflicts)}")
    assert ok and new==old and set(wnew)=={1} and set(conflicts)=={1}
random.seed(1)
for BN in (128, 256):
    for Dv in (64, 128, 256): run(Dv, BN)
