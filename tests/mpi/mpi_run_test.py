#!/usr/bin/env python3
"""`mpirun -np N hexplan run` end to end (docs/runtime.md, "Across machines"); ctest runs one case
per test when CMake found MPI. Each case writes a cluster file whose nodes are ranks, places a
plan on it with `hexplan place`, and compares the ranks' run with the one-process run.

  two-ranks   a HEFT plan over two nodes: output bit-equal to one process; a rank
              count other than the node count exits 2 naming both
  four-ranks  a pipeline plan over four nodes: bit-equal
  rank-fails  a kernel that fails on rank 1 (HEXPLAN_TEST_FAIL_OP) ends both ranks with the op
              and the rank named; a rank killed with SIGKILL ends the job too
  tp-four-ranks  `hexplan tp` plans (Megatron 1D, AutoDDL and AsymGroup 2D) over four ranks:
              `mpirun -np 4 hexplan run gpt2 --tp-plan P` runs one rank per plan node with MPI
              collectives; its output within 1e-5 relative of the one-process forward and of
              the same plan run on threads in one process
  profile-network  `mpirun -np 2 hexplan profile --network`: point-to-point, all-reduce,
              all-gather and reduce-scatter samples from 4 KiB up by 2x (the collectives' values
              checked by hexplan) and the size-regime fits (cost/fit_collective.h) with their
              errors on the fitted and the held-out sizes, written on rank 0, beside the op
              profile
  uneven-links  ranks 1 and 2 in network namespaces, each on a veth pair to a bridge (rank 0's
              side) shaped by tbf (1 Gbit/s and 5 Gbit/s), the cluster file with those links
              through a switch: a three-stage pipeline plan bit-equal to one process, and both
              pairs carried their messages (the interfaces' byte counters).
              Exits 77 like shaped-links
  shaped-links  rank 1 in a network namespace joined to rank 0 by a veth pair that tc's tbf
              shapes to 1 Gbit/s, MPI over TCP on it: a pipeline plan's output bit-equal to one
              process, and `profile --network` sees the shaped rate (large messages well under
              2 Gbit/s, where shared memory moves GB/s). Exits 77 (skipped) where network
              namespaces cannot be made (not root, no `ip`/`tc`, no CAP_NET_ADMIN)

Usage: mpi_run_test.py --hexplan PATH --mpirun PATH CASE
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

MODEL = ["lstm", "--seq", "3", "--layers", "2", "--io", "8"]
# Generous bounds that only catch a hang (the runs take a few seconds).
HANG_S = 120


def cluster_yaml(nodes, ethernet="10Gbps"):
    """One single-core CPU device per node; the nodes joined by 10 Gbit/s Ethernet through a
    switch (which the file lists under the first node)."""
    lines = ["name: %d-nodes" % nodes, "nodes:"]
    for i in range(nodes):
        lines += ["  - name: n%d" % i, "    devices:",
                  '      - {name: "cpu:%d", kind: cpu, model: Xeon E5-2698 v4, cores: 1, '
                  "memory: 4GB}" % i]
        if i == 0:
            lines.append("    switches: [net]")
    lines.append("links:")
    for i in range(nodes):
        lines.append('  - {kind: memory, a: n%d.host, b: "cpu:%d", bandwidth: 20GB/s, '
                     "latency: 100ns}" % (i, i))
        lines.append('  - {kind: ethernet, a: "cpu:%d", b: net, bandwidth: %s, '
                     "latency: 10us}" % (i, ethernet))
    return "\n".join(lines) + "\n"


class Runner:
    def __init__(self, args, tmp):
        self.hexplan = args.hexplan
        self.mpirun = args.mpirun
        self.tmp = tmp
        self.launcher = []  # put before hexplan on mpirun's command line
        self.env = dict(os.environ)
        # ASan's leak check would report Open MPI's own allocations that live to exit.
        self.env["ASAN_OPTIONS"] = self.env.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
        # Containers forbid the cross-process copies (CMA) of Open MPI's shared-memory transport;
        # the ranks share one machine, so shared memory alone (no probing of other transports).
        self.env["OMPI_MCA_btl_vader_single_copy_mechanism"] = "none"
        self.env["OMPI_MCA_pml"] = "ob1"
        self.env["OMPI_MCA_btl"] = "self,vader"

    def path(self, name):
        return os.path.join(self.tmp, name)

    def hx(self, *argv, check=True):
        r = subprocess.run([self.hexplan, *argv], capture_output=True, text=True,
                           env=self.env, timeout=HANG_S)
        if check and r.returncode != 0:
            sys.exit("FAIL: hexplan %s exited %d:\n%s" % (" ".join(argv), r.returncode, r.stderr))
        return r

    def mpirun_argv(self, ranks, *argv):
        cmd = [self.mpirun, "-np", str(ranks), "--oversubscribe", "--bind-to", "none"]
        if os.geteuid() == 0:
            cmd.append("--allow-run-as-root")
        for name in ("ASAN_OPTIONS", "HEXPLAN_TEST_FAIL_OP", "OMPI_MCA_btl_tcp_if_include",
                     "OMPI_MCA_coll_libnbc_iallreduce_algorithm",
                     "OMPI_MCA_oob_tcp_if_include", "PMIX_MCA_ptl", "PMIX_MCA_ptl_tcp_if_include",
                     "PMIX_MCA_ptl_tcp_remote_connections"):
            if name in self.env:
                cmd += ["-x", name]
        return cmd + self.launcher + [self.hexplan, *argv]

    def mpi(self, ranks, *argv):
        start = time.monotonic()
        r = subprocess.run(self.mpirun_argv(ranks, *argv), capture_output=True, text=True,
                           env=self.env, timeout=HANG_S)
        return r, time.monotonic() - start

    def cluster(self, nodes, ethernet="10Gbps"):
        path = self.path("cluster%d.yaml" % nodes)
        with open(path, "w") as f:
            f.write(cluster_yaml(nodes, ethernet))
        return path

    def place(self, cluster, algo, model=MODEL):
        plan = self.path("%s-%s.json" % (os.path.basename(cluster), algo))
        self.hx("place", *model, "--cluster", cluster, "--algo", algo, "-o", plan)
        with open(plan) as f:
            return plan, json.load(f)


def crossing_activations(plan):
    return sum(1 for t in plan["transfers"]
               if t["kind"] == "activation" and t["src"] != t["dst"])


def check_bit_equal(run, ranks, cluster, algo, model=MODEL):
    plan, parsed = run.place(cluster, algo, model)
    if crossing_activations(parsed) == 0:
        sys.exit("FAIL: the %s plan sends nothing between nodes; the test proves nothing" % algo)
    one = run.path("%s-%d-one.npy" % (algo, ranks))
    many = run.path("%s-%d-mpi.npy" % (algo, ranks))
    common = [*model, "--plan", plan, "--random-input", "--seed", "5"]
    run.hx("run", *common, "--warmup", "0", "--output", one)
    # Two runs: the second reuses the executor's state and the same message tags.
    r, seconds = run.mpi(ranks, "run", *common, "--repeat", "2", "--output", many)
    if r.returncode != 0:
        sys.exit("FAIL: mpirun -np %d (%s) exited %d:\n%s%s" %
                 (ranks, algo, r.returncode, r.stdout, r.stderr))
    lines = r.stdout.splitlines()
    if sum(l.startswith("ranks ") for l in lines) != 1 or \
            sum(l.startswith("latency ") for l in lines) != 1:
        sys.exit("FAIL: expected one report (rank 0's) naming the ranks, got:\n" + r.stdout)
    with open(one, "rb") as a, open(many, "rb") as b:
        if a.read() != b.read():
            sys.exit("FAIL: %s over %d ranks: output differs from the one-process run" %
                     (algo, ranks))
    print("ok: %s over %d ranks bit-equal to one process (%.1f s)" % (algo, ranks, seconds))
    return plan


def case_two_ranks(run):
    plan = check_bit_equal(run, 2, run.cluster(2), "heft")
    # One rank for two nodes: exit 2 naming both numbers.
    r, _ = run.mpi(1, "run", *MODEL, "--plan", plan, "--random-input")
    if r.returncode != 2 or "mpirun started 1 ranks" not in r.stderr or "2 nodes" not in r.stderr:
        sys.exit("FAIL: -np 1 on two nodes: exit %d, stderr:\n%s" % (r.returncode, r.stderr))
    print("ok: -np 1 on two nodes exits 2: " + r.stderr.strip().splitlines()[0])


def case_four_ranks(run):
    check_bit_equal(run, 4, run.cluster(4), "pipeline")


# (method, cluster, extra `hexplan tp` flags): the layouts of docs/tensor-parallel.md on 4 nodes.
TP_PLANS = [("megatron", "asym:nodes=4", []), ("autoddl", "asym:nodes=4", []),
             ("asymgroup", "asym:gpus=1,1,2,3", ["--groups", "2", "--paper-groups"])]


def read_npy_f32(path):
    """(shape, values) of a little-endian fp32 .npy file (no numpy needed)."""
    import array
    import ast
    with open(path, "rb") as f:
        data = f.read()
    header_len = int.from_bytes(data[8:10], "little")
    header = ast.literal_eval(data[10:10 + header_len].decode("latin1"))
    if header["descr"] != "<f4" or header["fortran_order"]:
        sys.exit("FAIL: %s: expected a C-order fp32 array, got %s" % (path, header))
    values = array.array("f")
    values.frombytes(data[10 + header_len:])
    return tuple(header["shape"]), values


def relative_difference(a_path, b_path):
    (a_shape, a), (b_shape, b) = read_npy_f32(a_path), read_npy_f32(b_path)
    if a_shape != b_shape or len(a) != len(b):
        return float("inf")
    largest = max([abs(v) for v in b] + [1e-30])
    return max([abs(x - y) for x, y in zip(a, b)] + [0.0]) / largest


def case_tp_four_ranks(run):
    for algo, cluster, extra in TP_PLANS:
        r = run.hx("tp", "gpt2", "--cluster", cluster, "--algo", algo, "--batch", "2",
                   "--input-len", "8", "--output-len", "1", *extra, "--json")
        plan = run.path("tp-%s.json" % algo)
        with open(plan, "w") as f:
            f.write(r.stdout)
        one, many = run.path("tp-%s-one.npy" % algo), run.path("tp-%s-mpi.npy" % algo)
        common = ["run", "gpt2", "--tp-plan", plan, "--tp-layers", "1", "--json"]
        run.hx(*common, "--output", one)
        r, seconds = run.mpi(4, *common, "--output", many)
        if r.returncode != 0:
            sys.exit("FAIL: mpirun -np 4 --tp-plan (%s) exited %d:\n%s%s" %
                     (algo, r.returncode, r.stdout, r.stderr))
        report = json.loads(r.stdout)
        if report["transport"] != "mpi" or report["ranks"] != 4 or \
                not report["max_relative_error"] <= 1e-5:
            sys.exit("FAIL: %s over mpirun: %s" % (algo, r.stdout))
        diff = relative_difference(many, one)
        if not diff <= 1e-5:
            sys.exit("FAIL: %s over 4 MPI ranks differs from threads by %g" % (algo, diff))
        print("ok: %s over 4 MPI ranks: %.2e from the reference, %.2e from threads (%.1f s)" %
              (algo, report["max_relative_error"], diff, seconds))


def rank_pids(mpirun_pid, rank):
    """The pids of mpirun's children whose environment says they are `rank`."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            with open("/proc/%s/environ" % entry, "rb") as f:
                environ = f.read().split(b"\0")
        except (OSError, ValueError, IndexError):
            continue
        if ppid == mpirun_pid and b"OMPI_COMM_WORLD_RANK=%d" % rank in environ:
            pids.append(int(entry))
    return pids


def case_rank_fails(run):
    cluster = run.cluster(2)
    plan, parsed = run.place(cluster, "pipeline")
    on_rank1 = [d for d in parsed["devices"] if d["device"] == "cpu:1"][0]
    op = on_rank1["subgraphs"][-1][-1]  # the last op of its last subgraph
    run.env["HEXPLAN_TEST_FAIL_OP"] = op
    r, seconds = run.mpi(2, "run", *MODEL, "--plan", plan, "--random-input", "--watchdog", "20")
    del run.env["HEXPLAN_TEST_FAIL_OP"]
    if r.returncode == 0 or "rank 1 (node n1)" not in r.stderr or op not in r.stderr:
        sys.exit("FAIL: a kernel failing on rank 1: exit %d, stderr:\n%s" % (r.returncode, r.stderr))
    print("ok: a kernel failing on rank 1 ends the job, exit %d in %.1f s: %s" %
          (r.returncode, seconds,
           [l for l in r.stderr.splitlines() if "rank 1 (node n1)" in l][0]))

    # A rank killed mid-run (SIGKILL: no chance to say anything): mpirun ends the job.
    cmd = run.mpirun_argv(2, "run", *MODEL, "--plan", plan, "--random-input", "--repeat", "100000",
                          "--warmup", "0")
    start = time.monotonic()
    job = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env=run.env)
    victims = []
    while not victims and time.monotonic() - start < HANG_S and job.poll() is None:
        time.sleep(0.5)
        victims = rank_pids(job.pid, 1)
    if not victims:
        job.kill()
        sys.exit("FAIL: rank 1 of the long job never appeared (exit %s)" % job.poll())
    time.sleep(0.5)  # inside the runs (thousands of them)
    os.kill(victims[0], signal.SIGKILL)
    killed_at = time.monotonic()
    try:
        out, err = job.communicate(timeout=HANG_S)
    except subprocess.TimeoutExpired:
        job.kill()
        sys.exit("FAIL: the job hangs after rank 1 was killed")
    survivors = rank_pids(job.pid, 0)
    if job.returncode == 0 or survivors:
        sys.exit("FAIL: rank 1 killed: exit %d, ranks left %s, stderr:\n%s" %
                 (job.returncode, survivors, err))
    print("ok: rank 1 killed: mpirun exits %d after %.1f s" %
          (job.returncode, time.monotonic() - killed_at))


def case_profile_network(run):
    net, prof = run.path("net.json"), run.path("profile.json")
    # By 2x: the fits take 4, 16 and 64 KiB, 8 and 32 KiB are held out.
    r, seconds = run.mpi(2, "profile", *MODEL, "--network", net, "--network-max-bytes", "65536",
                         "--network-step", "2", "--repeat", "2", "--budget", "0.1", "-o", prof)
    if r.returncode != 0 or not os.path.exists(net) or not os.path.exists(prof):
        sys.exit("FAIL: profile --network exited %d:\n%s%s" % (r.returncode, r.stdout, r.stderr))
    with open(net) as f:
        fit = json.load(f)
    sizes = [4096, 8192, 16384, 32768, 65536]
    ok = (fit["format"] == "hexplan-network" and fit["ranks"] == 2 and len(fit["p2p"]) == 1
          and all(0 <= f[key] < 10 for f in (fit["p2p"][0], fit["all_reduce"])
                  for key in ("geomean_rel_error", "held_out_error"))
          and fit["p2p"][0]["regimes"][0]["latency_s"] == fit["p2p"][0]["latency_s"]
          and fit["p2p"][0]["ranks"] == [0, 1]
          and [s["bytes"] for s in fit["p2p"][0]["samples"]] == sizes
          and [s["bytes"] for s in fit["all_reduce"]["samples"]] == sizes
          and [s["bytes"] for s in fit["all_gather"]["samples"]] == sizes
          and [s["bytes"] for s in fit["reduce_scatter"]["samples"]] == sizes
          and all(s["seconds"] > 0 for s in fit["all_reduce"]["samples"])
          and fit["p2p"][0]["latency_s"] >= 0 and fit["p2p"][0]["bandwidth_bytes_per_s"] > 0
          and fit["all_reduce"]["alpha_s"] >= 0 and fit["all_reduce"]["bus_bytes_per_s"] > 0
          # The transport asks Open MPI's libnbc for the ring (its default below four ranks
          # reduces to one rank and broadcasts back: twice the ring's time for large buffers).
          and fit["all_reduce"]["algorithm"] == "ring")
    if not ok:
        sys.exit("FAIL: unexpected network profile:\n" + json.dumps(fit, indent=1))
    # A user's own choice of algorithm stays, and the profile says which ran.
    run.env["OMPI_MCA_coll_libnbc_iallreduce_algorithm"] = "rabenseifner"
    try:
        r, _ = run.mpi(2, "profile", *MODEL, "--network", net, "--network-max-bytes", "16384",
                       "--network-step", "2", "--repeat", "1", "--budget", "0.1", "-o", prof)
    finally:
        del run.env["OMPI_MCA_coll_libnbc_iallreduce_algorithm"]
    with open(net) as f:
        chosen = json.load(f)["all_reduce"].get("algorithm")
    if r.returncode != 0 or chosen != "rabenseifner":
        sys.exit("FAIL: profile --network with the user's algorithm (rabenseifner): exit %d, "
                 "algorithm %r\n%s" % (r.returncode, chosen, r.stderr))
    print("ok: profile --network over 2 ranks (%.1f s): p2p %.1f us + S / %.2g GB/s, all-reduce "
          "alpha %.1f us, bus %.2g GB/s" %
          (seconds, fit["p2p"][0]["latency_s"] * 1e6, fit["p2p"][0]["bandwidth_bytes_per_s"] / 1e9,
           fit["all_reduce"]["alpha_s"] * 1e6, fit["all_reduce"]["bus_bytes_per_s"] / 1e9))


SKIPPED = 77  # ctest's SKIP_RETURN_CODE


def sh(*argv):
    return subprocess.run(argv, capture_output=True, text=True).returncode == 0


def tbf(dev, rate, ns=None):
    cmd = ["tc", "qdisc", "add", "dev", dev, "root", "tbf", "rate", rate, "burst", "256kb",
           "latency", "1s"]
    return (["ip", "netns", "exec", ns] if ns else []) + cmd


class ShapedLink:
    """Network namespace `ns` holding one end of a veth pair; both ends shaped by tbf."""

    def __init__(self, tag, rate):
        self.ns, self.a, self.b = "hxns%s" % tag, "hxa%s" % tag, "hxb%s" % tag
        self.subnet = "10.98.%d" % (int(tag) % 250)
        self.rate = rate

    def up(self):
        steps = [["ip", "netns", "add", self.ns],
                 ["ip", "link", "add", self.a, "type", "veth", "peer", "name", self.b],
                 ["ip", "link", "set", self.b, "netns", self.ns],
                 ["ip", "addr", "add", self.subnet + ".1/24", "dev", self.a],
                 ["ip", "link", "set", self.a, "up"],
                 ["ip", "netns", "exec", self.ns, "ip", "addr", "add", self.subnet + ".2/24",
                  "dev", self.b],
                 ["ip", "netns", "exec", self.ns, "ip", "link", "set", self.b, "up"],
                 ["ip", "netns", "exec", self.ns, "ip", "link", "set", "lo", "up"],
                 tbf(self.a, self.rate), tbf(self.b, self.rate, self.ns)]
        return all(sh(*step) for step in steps)

    def down(self):
        sh("ip", "link", "del", self.a)
        sh("ip", "netns", "del", self.ns)


def skip_unless_root_with_ip_and_tc():
    if os.geteuid() != 0 or not all(shutil.which(t) for t in ("ip", "tc")):
        print("skip: needs root, ip and tc")
        sys.exit(SKIPPED)


def write_rank_wrapper(run, name, body):
    """An executable mpirun wrapper script that runs each rank as `body` (sh) says."""
    wrapper = run.path(name)
    with open(wrapper, "w") as f:
        f.write("#!/bin/sh\n" + body)
    os.chmod(wrapper, 0o755)
    return wrapper


def case_shaped_links(run):
    skip_unless_root_with_ip_and_tc()
    link = ShapedLink(str(os.getpid() % 100000), "1gbit")
    try:
        if not link.up():
            print("skip: cannot make a network namespace and a shaped veth pair here")
            sys.exit(SKIPPED)
        wrapper = write_rank_wrapper(
            run, "rank1-in-namespace.sh",
            '[ "$OMPI_COMM_WORLD_RANK" = 1 ] && exec ip netns exec %s "$@"\nexec "$@"\n' % link.ns)
        run.env.update({"OMPI_MCA_btl": "self,tcp", "OMPI_MCA_btl_tcp_if_include": link.subnet +
                        ".0/24", "OMPI_MCA_oob_tcp_if_include": link.subnet + ".0/24",
                        # The rank in the namespace reaches mpirun's PMIx server over the link.
                        "PMIX_MCA_ptl": "tcp", "PMIX_MCA_ptl_tcp_if_include": link.subnet + ".0/24",
                        "PMIX_MCA_ptl_tcp_remote_connections": "1"})
        run.launcher = [wrapper]
        check_bit_equal(run, 2, run.cluster(2, ethernet="1Gbps"), "pipeline")
        net, prof = run.path("net.json"), run.path("profile.json")
        r, seconds = run.mpi(2, "profile", *MODEL, "--network", net, "--network-max-bytes",
                             str(4 << 20), "--repeat", "2", "--budget", "0.1", "-o", prof)
        if r.returncode != 0:
            sys.exit("FAIL: profile --network over the shaped link exited %d:\n%s" %
                     (r.returncode, r.stderr))
        with open(net) as f:
            fit = json.load(f)
        largest = fit["p2p"][0]["samples"][-1]
        rate = largest["bytes"] / largest["seconds"]
        if rate > 250e6:
            sys.exit("FAIL: 4 MiB crossed at %.0f MB/s: not through the 1 Gbit/s link" %
                     (rate / 1e6))
        print("ok: over a 1 Gbit/s tbf-shaped veth pair (%.1f s): 4 MiB one way at %.0f MB/s; fit "
              "%.1f us + S / %.0f MB/s (geomean error %.0f%%)" %
              (seconds, rate / 1e6, fit["p2p"][0]["latency_s"] * 1e6,
               fit["p2p"][0]["bandwidth_bytes_per_s"] / 1e6,
               100 * fit["p2p"][0]["geomean_rel_error"]))
    finally:
        link.down()


class UnevenLinks:
    """A bridge in this namespace (rank 0's, on the bridge's address) and ranks 1 and 2 each in a
    network namespace on a veth pair to the bridge, the pairs shaped by tbf both ways: rank 1's
    to 1 Gbit/s, rank 2's to 5 Gbit/s. One subnet: every rank reaches every other (and
    mpirun's PMIx server) without routes."""

    RATES = {1: "1gbit", 2: "5gbit"}

    def __init__(self, tag, rates=None):
        self.tag = tag
        if rates is not None:
            self.RATES = rates  # rank -> its pair's rate (bench/mpi_shaped_bench.py)
        self.bridge = "hxbr%s" % tag
        self.ns = {0: None, **{j: "hxun%d%s" % (j, tag) for j in self.RATES}}
        self.subnet = "10.97.%d" % (int(tag) % 250)
        self.devs = {j: ("hxu%d%s" % (j, tag), "hxv%d%s" % (j, tag)) for j in self.RATES}

    def up(self):
        steps = [["ip", "link", "add", self.bridge, "type", "bridge"],
                 ["ip", "addr", "add", self.subnet + ".1/24", "dev", self.bridge],
                 ["ip", "link", "set", self.bridge, "up"]]
        for j, rate in sorted(self.RATES.items()):
            a, b = self.devs[j]
            at = ["ip", "netns", "exec", self.ns[j]]
            steps += [["ip", "netns", "add", self.ns[j]], at + ["ip", "link", "set", "lo", "up"],
                      ["ip", "link", "add", a, "type", "veth", "peer", "name", b],
                      ["ip", "link", "set", a, "master", self.bridge], ["ip", "link", "set", a, "up"],
                      ["ip", "link", "set", b, "netns", self.ns[j]],
                      at + ["ip", "addr", "add", "%s.%d/24" % (self.subnet, j + 1), "dev", b],
                      at + ["ip", "link", "set", b, "up"], tbf(a, rate), tbf(b, rate, self.ns[j])]
        return all(sh(*step) for step in steps)

    def down(self):
        for j in self.RATES:
            sh("ip", "link", "del", self.devs[j][0])
            sh("ip", "netns", "del", self.ns[j])
        sh("ip", "link", "del", self.bridge)

    def bytes_carried(self, j):
        """Bytes rank j's pair carried, both ways."""
        base = "/sys/class/net/%s/statistics/" % self.devs[j][0]
        total = 0
        for name in ("tx_bytes", "rx_bytes"):
            with open(base + name) as f:
                total += int(f.read())
        return total


def uneven_cluster_yaml():
    """Three one-core nodes through a switch (on n0): n0 on it directly, n1 by 1 Gbit/s, n2 by
    5 Gbit/s."""
    lines = ["name: uneven", "nodes:"]
    for i in range(3):
        lines += ["  - name: n%d" % i, "    devices:",
                  '      - {name: "cpu:%d", kind: cpu, model: Xeon E5-2698 v4, cores: 1, '
                  "memory: 4GB}" % i]
        if i == 0:
            lines.append("    switches: [net]")
    lines.append("links:")
    for i in range(3):
        lines.append('  - {kind: memory, a: n%d.host, b: "cpu:%d", bandwidth: 20GB/s, '
                     "latency: 100ns}" % (i, i))
    lines.append('  - {kind: ethernet, a: "cpu:0", b: net, bandwidth: 10GB/s, latency: 1us}')
    for j, rate in sorted(UnevenLinks.RATES.items()):
        lines.append('  - {kind: ethernet, a: "cpu:%d", b: net, bandwidth: %sbps, '
                     "latency: 10us}" % (j, rate[:-4].upper() + "G"))
    return "\n".join(lines) + "\n"


def case_uneven_links(run):
    skip_unless_root_with_ip_and_tc()
    links = UnevenLinks(str(os.getpid() % 10000))
    try:
        if not links.up():
            print("skip: cannot make network namespaces and shaped veth pairs here")
            sys.exit(SKIPPED)
        wrapper = write_rank_wrapper(
            run, "ranks-in-namespaces.sh",
            'case "$OMPI_COMM_WORLD_RANK" in\n'
            '  1) exec ip netns exec %s "$@";;\n  2) exec ip netns exec %s "$@";;\n'
            'esac\nexec "$@"\n' % (links.ns[1], links.ns[2]))
        net = links.subnet + ".0/24"
        run.env.update({"OMPI_MCA_btl": "self,tcp", "OMPI_MCA_btl_tcp_if_include": net,
                        "OMPI_MCA_oob_tcp_if_include": net, "PMIX_MCA_ptl": "tcp",
                        "PMIX_MCA_ptl_tcp_if_include": net,
                        "PMIX_MCA_ptl_tcp_remote_connections": "1"})
        run.launcher = [wrapper]
        cluster = run.path("uneven.yaml")
        with open(cluster, "w") as f:
            f.write(uneven_cluster_yaml())
        before = {j: links.bytes_carried(j) for j in links.RATES}
        # Three layers: the pipeline planner makes three stages, n0 -> n1 -> n2.
        plan = check_bit_equal(run, 3, cluster, "pipeline", ["lstm", "--seq", "3", "--layers", "3",
                                                             "--io", "8"])
        carried = {j: links.bytes_carried(j) - before[j] for j in links.RATES}
        with open(plan) as f:
            parsed = json.load(f)
        # Messages that cross rank j's pair: those from or to n_j.
        crossing = {j: 0 for j in links.RATES}
        for t in parsed["transfers"]:
            if t["kind"] == "activation" and t["src"] != t["dst"]:
                for j in links.RATES:
                    crossing[j] += "cpu:%d" % j in (t["src"], t["dst"])
        for j, messages in crossing.items():
            # Two runs (--repeat 2), each message at least a 64-byte packet.
            if messages == 0 or carried[j] < 2 * 64 * messages:
                sys.exit("FAIL: n%d's %s pair carried %d bytes for %d messages a run: the plan "
                         "does not cross it, or its traffic went elsewhere" %
                         (j, links.RATES[j], carried[j], messages))
        print("ok: a pipeline over 3 ranks across uneven links bit-equal to one process; "
              "activations a run and bytes carried: %s" %
              ", ".join("n%d's %s pair %d, %d" % (j, links.RATES[j], crossing[j], carried[j])
                        for j in sorted(carried)))
    finally:
        links.down()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hexplan", required=True)
    ap.add_argument("--mpirun", required=True)
    ap.add_argument("case", choices=["two-ranks", "four-ranks", "tp-four-ranks", "rank-fails",
                                     "profile-network", "shaped-links", "uneven-links"])
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="hx-mpi-") as tmp:
        run = Runner(args, tmp)
        {"two-ranks": case_two_ranks, "four-ranks": case_four_ranks,
         "tp-four-ranks": case_tp_four_ranks,
         "rank-fails": case_rank_fails,
         "profile-network": case_profile_network,
         "shaped-links": case_shaped_links,
         "uneven-links": case_uneven_links}[args.case](run)


if __name__ == "__main__":
    main()
