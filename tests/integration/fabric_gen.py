"""Tiny FT(2;M0,M1) generator in the ibsim topology format, for testing the test bed itself.

Same naming and port order as `sar-route gen --fabric ft2:M0,M1`: hosts h00000.., leaves
leaf000.., spines spine000..; a leaf's host ports come first (1..M0), then its spine ports
(M0+1..2*M0, `parallel` adjacent cables per spine); spine port j*parallel+1.. goes to leaf j.
Every node gets its own switchguid=/caguid= line, so GUIDs do not depend on ibsim's counters.
"""

import argparse

SWITCH_GUID_BASE = 0x0002C90000100000
HCA_GUID_BASE = 0x0002C90000200000


def ft2(m0, m1, parallel=1):
    """Returns the topology text of FT(2;m0,m1): m1 leaves, m0 spines, m0 hosts per leaf."""
    leaves = [f"leaf{i:03d}" for i in range(m1)]
    spines = [f"spine{i:03d}" for i in range(m0)]
    hosts = [f"h{i:05d}" for i in range(m0 * m1)]
    out = []
    guid = SWITCH_GUID_BASE
    for li, leaf in enumerate(leaves):
        out.append(f"switchguid=0x{guid:016x}")
        out.append(f'Switch\t{m0 + m0 * parallel} "{leaf}"\t# "{leaf}" enhanced port 0 lid 0 lmc 0')
        for j in range(m0):
            h = hosts[li * m0 + j]
            out.append(f'[{j + 1}]\t"{h}"[1]\t# "{h} HCA-1" lid 0 4xHDR')
        for s, spine in enumerate(spines):
            for c in range(parallel):
                port = m0 + s * parallel + c + 1
                rport = li * parallel + c + 1
                out.append(f'[{port}]\t"{spine}"[{rport}]\t# "{spine}" lid 0 4xHDR')
        out.append("")
        guid += 1
    for s, spine in enumerate(spines):
        out.append(f"switchguid=0x{guid:016x}")
        out.append(f'Switch\t{m1 * parallel} "{spine}"\t# "{spine}" enhanced port 0 lid 0 lmc 0')
        for li, leaf in enumerate(leaves):
            for c in range(parallel):
                port = li * parallel + c + 1
                rport = m0 + s * parallel + c + 1
                out.append(f'[{port}]\t"{leaf}"[{rport}]\t# "{leaf}" lid 0 4xHDR')
        out.append("")
        guid += 1
    guid = HCA_GUID_BASE
    for i, h in enumerate(hosts):
        leaf = leaves[i // m0]
        out.append(f"caguid=0x{guid:016x}")
        out.append(f'Hca\t1 "{h}"\t# "{h} HCA-1"')
        out.append(f'[1]\t"{leaf}"[{i % m0 + 1}]\t# lid 0 lmc 0 "{leaf}" lid 0 4xHDR')
        out.append("")
        guid += 2
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("m0", type=int)
    ap.add_argument("m1", type=int)
    ap.add_argument("--parallel", type=int, default=1)
    ap.add_argument("-o", "--out", required=True)
    args = ap.parse_args()
    with open(args.out, "w") as f:
        f.write(ft2(args.m0, args.m1, args.parallel))


if __name__ == "__main__":
    main()
