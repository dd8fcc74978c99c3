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
    # the ldmatrix / stmatrix form, per warp: a task is 16 keys (32s + 16h ..)
    # by n = 4, 2 or 1 chunks of 16 columns (c0 .. c0 + n - 1 of panel P);
    # ldmatrix.x{n}.trans A reads its keys 0..7, B keys 8..15, matrix q =
    # chunk c0 + q; every address is a per-lane base plus a constant, but
    # for c0's xor (a multiple of n, so c0 + q = c0 | q).
    def pieces(chunks):
        out=[]; c=0
        for n in (4,2,1):
            while chunks-c>=n: out.append((c,n)); c+=n
        return out
    conflicts=[]; readConflicts=[]
    for warp in range(4):
        for a in range(steps):
            s=warp+4*a
            for h in range(2):
                for P in range((Dv+127)//128):
                    for c0,n in pieces(min(8,(Dv-128*P)//16)):
                        regs={}
                        for half in range(2):
                            # lane L < 8n gives row L%8 of matrix L/8
                            rowaddr={}; banks=[]
                            for L in range(8*n):
                                q=L//8; key=32*s+16*h+8*half+L%8
                                base=(32*warp+L%8)*128+(((L//8)^(L%8))*16)
                                addr=(base^(c0*16))+P*BN*128+(128*a+16*h+8*half)*128
                                assert addr==P*BN*128+key*128+(((c0+q)^(key%8))*16)
                                rowaddr[(q,L%8)]=addr; banks.append((addr%128)//16)
                            for q in range(n):
                                readConflicts.append(8//len(set(banks[8*q:8*q+8])))
                            for T in range(32):
                                for q in range(n):
                                    e0=S[rowaddr[(q,2*(T%4))]+2*(T//4):][:2]; e1=S[rowaddr[(q,2*(T%4)+1)]+2*(T//4):][:2]
                                    regs[(T,half,q)]=int.from_bytes(bytes(e0)+bytes(e1),'little')
                        for T in range(32):
                            even=0x6420+(T//16)*0x1111; odd=0x7531-(T//16)*0x1111
                            for q in range(n):
                                regs[(T,'w',q)]=[prmt(regs[(T,0,q)],regs[(T,1,q)],even),prmt(regs[(T,0,q)],regs[(T,1,q)],odd)]
                        # stmatrix .x4 (chunks q, q+1) or .x2 (n = 1): matrix j =
                        # (chunk q + j/2, parity j%2); lane L addresses row L%8 of
                        # matrix L/8: Vt row 16 chunk + 2i + (parity ^ i/4).
                        for j0 in range(0,n,2):
                            mats=min(4,2*(n-j0))
                            lanes={j:set() for j in range(mats)}
                            for j in range(mats):
                                for T in range(32):
                                    i=T//4; q=j0+j//2; parity=j%2
                                    row=2*i+(parity^(i//4)); res=row%8
                                    wbase=(16*(j//2)+row)*128+(((2*warp)^res)*16)
                                    addr=(wbase^(16*h))+16*(8*P+c0+j0)*128+a*Dv*128+4*(T%4)
                                    d=16*(8*P+c0+q)+row
                                    assert addr==a*Dv*128+d*128+((((2*s+h)%8)^(d%8))*16)+4*(T%4)
                                    lanes[j].add((addr%128)//16)
                                    st32(new,wnew,addr,regs[(T,'w',q)][parity])
                                conflicts.append(8//len(lanes[j]))
    # the spec: Vt[d][p] = V[sigma(p)][d], swizzled
    ok=True
    for d in range(Dv):
        for p in range(BN):
            q=p%32; h,t,u,e=q//16,(q%16)//4,(q%4)//2,q%2
            key=(p//32)*32+16*h+8*u+2*t+e
            panel,pp=p//128,p%128
            addr=panel*Dv*128+d*128+(((pp//16)^(d%8))*16)+pp%16
            if old[addr]!=V[key][d]: ok=False
    print(f"BN={BN} Dv={Dv}: old matches the spec: {ok}; new == old: {new==old}; writes once: old {set(wold)} new {set(wnew)}; ldmatrix ways: {set(readConflicts)}; stmatrix ways: {set(conflicts)}")
    assert ok and new==old and set(wnew)=={1} and set(conflicts)=={1} and set(readConflicts)=={1}
random.seed(1)
for BN in (128, 256):
    for Dv in (16, 48, 64, 96, 112, 128, 256): run(Dv, BN)
