"""Kernel start, before and after: drives kernel sources over `docker exec -i` in
hardened containers, variants interleaved so they share the machine's load.

    python3 core/benches/kernel_start.py ROUNDS OLD_IMAGE OLD_KERNEL.py NEW_IMAGE
    e.g. git show 5eae2d1:core/src/sandbox/kernel.py > /tmp/kernel_old.py
         python3 core/benches/kernel_start.py 6 sandalyst-sandbox:b837e1dff1e6 \\
             /tmp/kernel_old.py sandalyst-sandbox:1550044e1517
Prints a Markdown table (min / median / max, ms). Results: BENCHMARKS.md.
"""
import json, os, subprocess, sys, time, statistics
rounds, old_image, old_kernel, new_image = sys.argv[1:5]
old_src = open(old_kernel).read()
new_src = open(os.path.join(os.path.dirname(__file__), "../src/sandbox/kernel.py")).read()
variants = {
  "before: plain kernel, previous image": (old_image, old_src, []),
  "IPython kernel (default)": (new_image, new_src, []),
  "IPython kernel, `SANDALYST_PREWARM=0`": (new_image, new_src, ["-e", "SANDALYST_PREWARM=0"]),
}
cids = {}
for name, (image, _, _) in variants.items():
    if image not in cids:
        cids[image] = subprocess.check_output(["docker","run","-d","--rm","--network","none","--read-only","--tmpfs","/tmp:rw,nosuid,nodev,noexec,size=256m","--cpus","1","--memory","2g","--user","1000:1000","-e","HOME=/tmp","-e","MPLCONFIGDIR=/tmp/matplotlib","-w","/tmp",image,"sleep","infinity"], text=True).strip()
res = {n: {"ready": [], "first": [], "imports3s": [], "rt": []} for n in variants}
def run(p, code, i):
    p.stdin.write(json.dumps({"type":"execute","id":i,"code":code})+"\n"); p.stdin.flush()
    while True:
        m = json.loads(p.stdout.readline())
        if m["type"] == "result": return m
try:
    for rep in range(int(rounds)):
        for name, (image, src, extra) in variants.items():
            t0 = time.time()
            p = subprocess.Popen(["docker","exec","-i","-e","IPYTHONDIR=/tmp/ipython"] + extra + [cids[image],"python3","-u","-c",src], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            while json.loads(p.stdout.readline())["type"] != "ready": pass
            t1 = time.time()
            run(p, "1+1", 1); t2 = time.time()
            rts = []
            for k in range(20):
                a = time.time(); run(p, "1+1", 2+k); rts.append(time.time()-a)
            time.sleep(3)
            a = time.time(); r = run(p, "import pandas, numpy, matplotlib.pyplot", 50); b = time.time()
            assert r["status"] == "ok", r
            res[name]["ready"].append((t1-t0)*1000); res[name]["first"].append((t2-t0)*1000)
            res[name]["imports3s"].append((b-a)*1000); res[name]["rt"].append(statistics.median(rts)*1000)
            p.stdin.close(); p.wait()
finally:
    for c in cids.values(): subprocess.run(["docker","rm","-f",c], capture_output=True)
f = lambda xs: "%.0f / %.0f / %.0f" % (min(xs), statistics.median(xs), max(xs))
g = lambda xs: "%.2f / %.2f / %.2f" % (min(xs), statistics.median(xs), max(xs))
print("| variant | exec start -> ready | -> first `1+1` reply | `1+1` round trip (median of 20) | `import pandas, numpy, matplotlib.pyplot` 3 s after start |")
print("|---|---|---|---|---|")
for n, r in res.items():
    print("| %s | %s | %s | %s | %s |" % (n, f(r["ready"]), f(r["first"]), g(r["rt"]), f(r["imports3s"])))
