#!/usr/bin/env python3
"""Shaped links: the network fit, and simulated against measured latency (issue 22's numbers;
docs/runtime.md, "Across machines"). Not in `make test`. Needs root, ip, tc and Open MPI.

Ranks 1..N-1 each in a network namespace on a veth pair to a bridge (rank 0's side), every pair
shaped both ways by tc's tbf (default 1 Gbit/s, burst 256 KiB), MPI over TCP on the bridge's
subnet (tests/mpi/mpi_run_test.py's UnevenLinks).

 1. The fit: `mpirun -np N hexplan profile --network` from 4 KiB to 64 MiB by 2x, twice. Run 1
    fits size regimes on every other size (4 KiB, 16 KiB, ...) and reports its error there and
    on the sizes between (held out); run 2 (`--network-check run1`) reports run 1's fit on all of
    run 2's sizes. Target: within 10 % geometric mean.
 2. A two-node pipeline plan: the cluster file's shaped links get the fitted latency and
    bandwidth of the regime that prices the plan's messages (`cluster_with_fit`); the plan is
    made and simulated on it with a one-node op profile (`hexplan profile`, same device model)
    and run under mpirun (`hexplan run --profile`: measured median and simulated).
 3. A two-rank Megatron TP plan (`hexplan run --tp-plan` under mpirun): time per decoder layer
    (the difference of runs of two layer counts, so MPI's start and the weights' set-up drop
    out) against the model: the same plan on threads in one process (its collectives cost next
    to nothing) plus two all-reduces per layer priced by run 1's all-reduce fit.

Usage (as root; timings at high priority, as docs/runtime.md reports them):
  nice -n -15 python3 bench/mpi_shaped_bench.py --hexplan build/release/hexplan [--ranks 4]
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "mpi"))
import mpi_run_test as mt  # noqa: E402

# A small LSTM (about 1 ms of compute a run here): its latency is much of it the hand-offs between
# the ranks (larger models' compute times are not reproducible within 10 % on this loaded VM),
# and the pipeline planner splits it over two nodes at the fitted link's latency.
PIPE_MODEL = ["lstm", "--seq", "8", "--layers", "4", "--io", "64"]
PIPE_MESSAGE_BYTES = 4 * 64  # [batch 1, io 64] fp32: the hidden state a step hands on


def node_lines(ranks):
    lines = ["name: shaped-%d" % ranks, "nodes:"]
    for i in range(ranks):
        lines += ["  - name: n%d" % i, "    devices:",
                  '      - {name: "cpu:%d", kind: cpu, model: Xeon E5-2698 v4, cores: 1, '
                  "memory: 8GB}" % i]
        if i == 0 and ranks > 1:
            lines.append("    switches: [net]")
    lines.append("links:")
    for i in range(ranks):
        lines.append('  - {kind: memory, a: n%d.host, b: "cpu:%d", bandwidth: 20GB/s, '
                     "latency: 100ns}" % (i, i))
    return lines


def cluster_with_fit(ranks, latency_s, bandwidth):
    """Rank 0 on the bridge (the switch, next to it), the others each by its shaped pair, with the
    fitted latency and bandwidth (a point-to-point message crosses one pair)."""
    lines = node_lines(ranks)
    lines.append('  - {kind: ethernet, a: "cpu:0", b: net, bandwidth: 100GB/s, latency: 0us}')
    for j in range(1, ranks):
        lines.append('  - {kind: ethernet, a: "cpu:%d", b: net, bandwidth: %.6gGB/s, '
                     "latency: %.6gus}" % (j, bandwidth / 1e9, max(latency_s, 0) * 1e6))
    return "\n".join(lines) + "\n"


def regime_for(fit, nbytes):
    """The point-to-point regime that prices `nbytes` (net.json's p2p entry)."""
    for r in fit["regimes"]:
        if r["up_to_bytes"] is None or nbytes <= r["up_to_bytes"]:
            return r
    return fit["regimes"][-1]


def allreduce_seconds(fit, ranks, nbytes):
    for r in fit["regimes"]:
        if r["up_to_bytes"] is None or nbytes <= r["up_to_bytes"]:
            break
    steps = 2.0 * (ranks - 1)
    return steps * r["alpha_s"] + steps / ranks * nbytes / r["bus_bytes_per_s"]


def geomean(values):
    return math.exp(sum(math.log(max(v, 1e-4)) for v in values) / len(values))


class Bench:
    def __init__(self, args, tmp, links):
        ns_args = argparse.Namespace(hexplan=args.hexplan, mpirun=args.mpirun)
        self.run = mt.Runner(ns_args, tmp)
        self.args, self.links, self.ranks = args, links, args.ranks
        wrapper = self.run.path("ranks-in-namespaces.sh")
        cases = "".join('  %d) exec ip netns exec %s "$@";;\n' % (j, links.ns[j])
                        for j in links.RATES)
        with open(wrapper, "w") as f:
            f.write('#!/bin/sh\ncase "$OMPI_COMM_WORLD_RANK" in\n%sesac\nexec "$@"\n' % cases)
        os.chmod(wrapper, 0o755)
        net = links.subnet + ".0/24"
        self.run.env.update({"OMPI_MCA_btl": "self,tcp", "OMPI_MCA_btl_tcp_if_include": net,
                             "OMPI_MCA_oob_tcp_if_include": net, "PMIX_MCA_ptl": "tcp",
                             "PMIX_MCA_ptl_tcp_if_include": net,
                             "PMIX_MCA_ptl_tcp_remote_connections": "1"})
        self.run.launcher = [wrapper]

    def mpi(self, ranks, *argv):
        r, seconds = self.run.mpi(ranks, *argv)
        if r.returncode != 0:
            sys.exit("FAIL: mpirun %s exited %d:\n%s%s" % (" ".join(argv), r.returncode, r.stdout,
                                                             r.stderr))
        return r

    def network(self, name, check=None):
        net = self.run.path(name)
        argv = ["profile", *mt.MODEL, "--network", net, "--network-step", "2",
                "--network-max-bytes", str(self.args.max_bytes), "--repeat", str(self.args.repeat),
                "--budget", "0.1", "--network-gap-us", str(self.args.gap_us),
                "-o", self.run.path("ops-%s" % name)]
        if check:
            argv += ["--network-check", check]
        print(self.mpi(self.ranks, *argv).stdout.strip())
        with open(net) as f:
            return net, json.load(f)


def report_fit(run1, run2):
    print("\n== fit (run 1: every other size fitted; run 2 checks run 1's fit) ==")
    rows = [("p2p 0-%d" % p["ranks"][1], p, q) for p, q in zip(run1["p2p"], run2["p2p"])]
    rows.append(("all-reduce", run1["all_reduce"], run2["all_reduce"]))
    worst = 0.0
    for name, a, b in rows:
        regimes = "; ".join(
            "%s%.1f us + S / %.0f MB/s" %
            ("" if r["up_to_bytes"] is None else "<= %.0f KiB: " % (r["up_to_bytes"] / 1024),
             r.get("latency_s", r.get("alpha_s", 0)) * 1e6,
             r.get("bandwidth_bytes_per_s", r.get("bus_bytes_per_s", 0)) / 1e6)
            for r in a["regimes"])
        print("%-11s %s" % (name, regimes))
        print("            fit %.1f%%, held-out sizes %.1f%%, second run %.1f%% (geometric mean)"
              % (100 * a["geomean_rel_error"], 100 * a["held_out_error"],
                 100 * b["prior_run_error"]))
        worst = max(worst, a["held_out_error"], b["prior_run_error"])
    return worst


def pipeline(bench, fit):
    print("\n== two-node pipeline plan (%s) ==" % " ".join(PIPE_MODEL))
    one = bench.run.path("one-node.yaml")
    with open(one, "w") as f:
        f.write("\n".join(node_lines(1)) + "\n")
    ops = bench.run.path("ops.json")
    bench.run.hx("profile", *PIPE_MODEL, "--cluster", one, "--repeat", "5", "-o", ops)
    bytes_each = PIPE_MESSAGE_BYTES
    # Below the smallest measured size the fit would extrapolate (a line through 4 KiB and up may
    # reach 0 s at 0 bytes): such a message costs what the smallest measured size does.
    smallest = min(x["bytes"] for x in fit["p2p"][0]["samples"])
    reg = regime_for(fit["p2p"][0], max(bytes_each, smallest))
    latency = reg["latency_s"]
    if bytes_each < smallest:
        latency += smallest / reg["bandwidth_bytes_per_s"]
    cluster = bench.run.path("fitted.yaml")
    with open(cluster, "w") as f:
        f.write(cluster_with_fit(2, latency, reg["bandwidth_bytes_per_s"]))
    plan = bench.run.path("pipeline-plan.json")
    bench.run.hx("place", *PIPE_MODEL, "--cluster", cluster, "--algo", "pipeline", "--profile", ops,
                 "-o", plan)
    with open(plan) as f:
        parsed = json.load(f)
    crossing = mt.crossing_activations(parsed)
    print("link: %.1f us + S / %.0f MB/s (%d-byte messages, priced as %d); %d activations cross" %
          (latency * 1e6, reg["bandwidth_bytes_per_s"] / 1e6, bytes_each,
           max(bytes_each, smallest), crossing))
    if crossing == 0:
        print("the planner kept the plan on one node: nothing to compare")
        return float("nan")
    errors = []
    for k in range(bench.args.launches):
        r = bench.mpi(2, "run", *PIPE_MODEL, "--plan", plan, "--random-input", "--warmup", "3",
                      "--repeat", "10", "--profile", ops, "--json", *bench.args.run_args.split())
        out = json.loads(r.stdout)
        errors.append(out["simulated_error"])
        print("launch %d: measured median %.2f ms, simulated %.2f ms (%+.1f%%)" %
              (k + 1, out["latency_ms_median"], out["simulated_ms"],
               100 * out["simulated_error"]))
    return statistics.median(errors)


def tp_layer_ms(bench, plan, layers, ranks):
    times = []
    for _ in range(bench.args.launches):
        # The median of five forwards after one unmeasured (the rank's setup and the first
        # forward's page faults are not the layer's time).
        argv = ["run", "gpt2", "--tp-plan", plan, "--tp-layers", str(layers), "--warmup", "1",
                "--repeat", "5", "--json"]
        r = bench.mpi(ranks, *argv) if ranks > 1 else bench.run.hx(*argv)
        times.append(json.loads(r.stdout)["forward_ms"])
    return statistics.median(times)


def tensor_parallel(bench, fit, ranks):
    batch, seq, hidden = 4, 32, 768
    print("\n== %d-rank Megatron TP plan (gpt2, batch %d x seq %d) ==" % (ranks, batch, seq))
    r = bench.run.hx("tp", "gpt2", "--cluster", "asym:nodes=%d" % ranks, "--algo", "megatron",
                     "--batch", str(batch), "--input-len", str(seq), "--output-len", "1", "--json")
    plan = bench.run.path("tp-%d.json" % ranks)
    with open(plan, "w") as f:
        f.write(r.stdout)
    lo, hi = 2, 6
    mpi = (tp_layer_ms(bench, plan, hi, ranks) - tp_layer_ms(bench, plan, lo, ranks)) / (hi - lo)
    threads = (tp_layer_ms(bench, plan, hi, 1) - tp_layer_ms(bench, plan, lo, 1)) / (hi - lo)
    reduce_ms = 1e3 * allreduce_seconds(fit["all_reduce"], ranks, batch * seq * hidden * 4)
    model = threads + 2 * reduce_ms
    print("per layer: measured %.2f ms; model %.2f ms = threads %.2f + 2 all-reduces of %d KiB "
          "x %.2f ms (%+.1f%%)" % (mpi, model, threads, batch * seq * hidden * 4 // 1024,
                                   reduce_ms, 100 * (model - mpi) / mpi))
    return (model - mpi) / mpi


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hexplan", required=True)
    ap.add_argument("--mpirun", default="mpirun")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--rate", default="1gbit")
    ap.add_argument("--max-bytes", type=int, default=64 << 20)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--launches", type=int, default=3)
    ap.add_argument("--gap-us", type=int, default=5000)
    ap.add_argument("--skip", default="", help="comma list of: pipeline, tp")
    ap.add_argument("--only-fit", action="store_true")
    ap.add_argument("--run-args", default="",
                    help="more arguments for the pipeline plan's `hexplan run` (e.g. --spin-us 0)")
    ap.add_argument("--fits", nargs=2, metavar=("NET1", "NET2"),
                    help="reuse an earlier bench's net1.json and net2.json (no network runs)")
    args = ap.parse_args()
    links = mt.UnevenLinks(str(os.getpid() % 10000),
                           {j: args.rate for j in range(1, args.ranks)})
    tmp = tempfile.mkdtemp(prefix="hx-shaped-")  # kept: the fits and plans, to look at
    print("files in " + tmp)
    if True:
        try:
            if not links.up():
                sys.exit("cannot make network namespaces and shaped veth pairs here")
            bench = Bench(args, tmp, links)
            if args.fits:  # an earlier bench's run 1 and run 2
                with open(args.fits[0]) as f1, open(args.fits[1]) as f2:
                    run1, run2 = json.load(f1), json.load(f2)
            else:
                net1, run1 = bench.network("net1.json")
                _, run2 = bench.network("net2.json", check=net1)
            worst = report_fit(run1, run2)
            if args.only_fit:
                return
            summary = ["fit: worst held-out / second-run geomean %.1f%%" % (100 * worst)]
            if args.ranks == 2 and "pipeline" not in args.skip:
                summary.append("pipeline: median simulated error %+.1f%%" %
                               (100 * pipeline(bench, run1)))
            if "tp" not in args.skip:
                summary.append("tp: %+.1f%%" % (100 * tensor_parallel(bench, run1, args.ranks)))
            print("\n== summary (%d ranks, %s pairs) ==\n%s" % (args.ranks, args.rate,
                                                              "\n".join(summary)))
        finally:
            links.down()


if __name__ == "__main__":
    main()
