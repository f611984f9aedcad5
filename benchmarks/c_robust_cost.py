"""Paper C robust SSL costs (issue 11 §4): DS3L / L2RW per iteration vs VAT and vs a plain implementation,
and Retrieve's wall-clock against DS3L's at the same number of epochs.

Part 1, per iteration. One training step (``loss`` + ``backward`` + Nesterov SGD step, paper C's MNIST
settings: lr 0.003, momentum 0.9, weight decay 5e-4) of sslkit's ``VAT(eps=2)``, ``DS3L(VAT)`` and
``L2RW(VAT)`` on paper C's MNIST CNN (``PaperCMNISTCNN``, 6 classes, 28x28; ``--model mlp``: the quick
protocol's MLP, 64 features, hidden 128, dropout 0.2), on the same pre-drawn synthetic batches of 50 labeled +
50 unlabeled inputs (the cost does not depend on the pixel values). The peer is
a plain implementation of the same update written in this file (``plain_ds3l_step``, ``plain_l2rw_step``):
hand-written VAT, then the explicit one-step look-ahead ``θ' = θ - α ∇θ`` with ``torch.func.functional_call``,
no engine, one forward per pass the update needs. Before timing, one step of each pair is checked to give the
same weights, meta loss, loss and updated parameters (allclose). The kinds are timed interleaved (each
repeat runs every kind once, in reversed order every other repeat), after a warm-up; medians. One torch
thread; on the CPU the clock is the process's CPU time (other jobs sharing the cores do not distort it),
else wall-clock with synchronisation.
Targets: DS3L / plain DS3L <= 1.2 and L2RW / plain L2RW <= 1.2 (paper C: DS3L costs about 3x VAT; the
ratios to VAT are printed, not gated).

Part 2, end to end. ``paper_c_robust.robust_run`` at protocol ``quick`` (``--scale cpu``: the ``cpu``
protocol, MNIST OOD, many minutes), OOD ratio 0.5, one seed: DS3L on the whole unlabeled set vs Retrieve (no
warm start) at budgets 0.1 (CORDS' config) and 0.5 (what the paper's hours imply), same number of epochs,
selection included, evaluation excluded; interleaved repeats, medians (``--e2e-repeats``, quick only). Target:
DS3L / Retrieve >= 3x in wall-clock at each budget (the CPU-time ratio is printed beside it); the script says
which budget readings pass.

Usage: ``python benchmarks/c_robust_cost.py [--model cnn|mlp|both] [--steps 10] [--repeats 5]
[--scale quick|cpu] [--e2e-repeats 3] [--skip-e2e] [--device cpu]``
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call

from sslkit.algorithms import DS3L, L2RW, VAT, Batch, FitContext
from sslkit.device import resolve_device
from sslkit.experiments import hardware_summary
from sslkit.experiments.paper_c.robust import build_task, robust_run
from sslkit.models import MLP, PaperCMNISTCNN

TARGET_PLAIN, TARGET_SPEEDUP = 1.2, 3.0
K, B = 6, 50
LR, INNER_LR, META_LR, VAT_EPS, XI = 0.003, 1e-3, 3e-4, 2.0, 1e-6


# ---------------------------------------------------------------- the plain reference (the peer)


def normalize(d):
    return d / (d.flatten(1).norm(dim=1).view(-1, *([1] * (d.dim() - 1))) + 1e-12)


def plain_vat(model, x_l, y_l, x_u):
    """Supervised CE, per-sample VAT KL (one power iteration) and the perturbed pass's logits."""
    sup = F.cross_entropy(model(x_l)[0], y_l)
    with torch.no_grad():
        p = torch.softmax(model(x_u)[0], dim=1)
    d = (normalize(torch.randn_like(x_u)) * XI).requires_grad_(True)
    kl = F.kl_div(F.log_softmax(model(x_u + d)[0], dim=1), p, reduction="batchmean")
    (g,) = torch.autograd.grad(kl, d)
    # d = ξ normalize(g), r = ε normalize(d), as VAT: |g| can be near normalize's 1e-12 guard
    z_adv = model(x_u + VAT_EPS * normalize(normalize(g) * XI))[0]
    per = F.kl_div(F.log_softmax(z_adv, dim=1), p, reduction="none").sum(1)
    return sup, per, z_adv


def look_ahead_loss(model, inner, x_l, y_l):
    """``CE(f_θ'(x_l), y_l)`` with ``θ' = θ - α ∇θ inner``, differentiable."""
    params = dict(model.named_parameters())
    grads = torch.autograd.grad(inner, list(params.values()), create_graph=True)
    fast = {n: p - INNER_LR * g for (n, p), g in zip(params.items(), grads)}
    return F.cross_entropy(functional_call(model, fast, (x_l,))[0], y_l)


def plain_ds3l_step(model, opt, wnet, wopt, x_l, y_l, x_u):
    sup, per, z_adv = plain_vat(model, x_l, y_l, x_u)
    probs = torch.softmax(z_adv.detach(), dim=1)
    v = wnet(probs).squeeze(1)
    meta = look_ahead_loss(model, sup + (v / v.sum() * per).sum(), x_l, y_l)
    wopt.zero_grad(set_to_none=True)
    meta.backward(inputs=list(wnet.parameters()), retain_graph=True)
    wopt.step()
    with torch.no_grad():
        v = wnet(probs).squeeze(1)
        w = v / v.sum()
    loss = sup + (w * per).sum()
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return w, meta.detach(), loss.detach()


def plain_l2rw_step(model, opt, x_l, y_l, x_u):
    sup, per, _ = plain_vat(model, x_l, y_l, x_u)
    eps = torch.zeros_like(per, requires_grad=True)
    meta = look_ahead_loss(model, sup + (eps * per).sum(), x_l, y_l)
    (g,) = torch.autograd.grad(meta, eps, retain_graph=True)
    w = torch.clamp(-g, min=0)
    w = w / w.sum() if float(w.sum()) > 0 else w
    loss = sup + (w * per).sum()
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return w, meta.detach(), loss.detach()


def plain_wnet():
    """DS3L's WNet, as MetaWeightNet: Linear(K, 100), ReLU, Linear(100, 1), then a sigmoid."""
    return nn.Sequential(nn.Linear(K, 100), nn.ReLU(), nn.Linear(100, 1), nn.Sigmoid())


# ---------------------------------------------------------------- one run of one kind


def make_model(kind):
    torch.manual_seed(0)
    return PaperCMNISTCNN(K) if kind == "cnn" else MLP(64, K, hidden=(128,))


def make_batches(kind, steps, device, seed=0):
    g = torch.Generator().manual_seed(seed)
    shape = (1, 28, 28) if kind == "cnn" else (64,)
    return [
        tuple(
            t.to(device)
            for t in (torch.randn(B, *shape, generator=g), torch.arange(B) % K, torch.randn(B, *shape, generator=g))
        )
        for _ in range(steps)
    ]


class Runner:
    """A fresh model, optimiser (and meta-network) for one kind; ``step(batch)`` does one training step."""

    def __init__(self, kind, model_kind, device):
        self.kind = kind
        self.model = make_model(model_kind).to(device).train()
        self.opt = torch.optim.SGD(self.model.parameters(), lr=LR, momentum=0.9, nesterov=True, weight_decay=5e-4)
        torch.manual_seed(1)
        if kind in ("vat", "ds3l", "l2rw"):
            vat = VAT(VAT_EPS, xi=XI)
            self.algo = {"vat": vat, "ds3l": DS3L(vat, inner_lr=INNER_LR, meta_lr=META_LR), "l2rw": L2RW(vat)}[kind]
            self.algo.setup(self.model, FitContext(num_classes=K, device=device))
        elif kind == "plain_ds3l":
            self.wnet = plain_wnet().to(device)
            self.wopt = torch.optim.Adam(self.wnet.parameters(), lr=META_LR)

    def step(self, i, x_l, y_l, x_u):
        if self.kind == "plain_ds3l":
            return plain_ds3l_step(self.model, self.opt, self.wnet, self.wopt, x_l, y_l, x_u)
        if self.kind == "plain_l2rw":
            return plain_l2rw_step(self.model, self.opt, x_l, y_l, x_u)
        out = self.algo.loss(self.model, Batch(x_l, y_l, x_u, step=i))
        self.opt.zero_grad(set_to_none=True)
        out.loss.backward()
        self.opt.step()
        return out


def check_same_update(model_kind, batch, device):
    """One step of ours and of the plain reference from the same state and RNG: same w, meta loss, loss, θ."""
    for name in ("ds3l", "l2rw"):
        ours, plain = Runner(name, model_kind, device), Runner("plain_" + name, model_kind, device)
        if name == "ds3l":
            plain.wnet.load_state_dict(
                {k.replace("net.", "", 1): v for k, v in ours.algo.meta_net_.state_dict().items()}
            )
        with torch.backends.cudnn.flags(enabled=True, benchmark=False, deterministic=True):  # same kernels (GPU)
            torch.manual_seed(2)
            out = ours.step(0, *batch)
            torch.manual_seed(2)
            w, meta, loss = plain.step(0, *batch)
        pairs = {
            "weights": (ours.algo.weights_, w),
            "meta loss": (out.logs["meta_loss"], meta),
            "loss": (out.logs["loss"], loss),
        }
        pairs.update({f"θ {n}": (p, q) for (n, p), q in zip(ours.model.named_parameters(), plain.model.parameters())})
        for what, (a, b) in pairs.items():
            assert torch.allclose(a, b, rtol=1e-4, atol=1e-6), f"{name}: {what} differs from the plain reference"
    print(f"  check ({model_kind}): DS3L and L2RW give the plain reference's weights, meta loss, loss and θ: OK")


def time_kind(kind, model_kind, batches, device, clock):
    runner = Runner(kind, model_kind, device)
    torch.manual_seed(3)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    t0 = clock()
    for i, batch in enumerate(batches):
        runner.step(i, *batch)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    return (clock() - t0) / len(batches)


def per_iteration(model_kind, args, device, clock) -> bool:
    batches = make_batches(model_kind, args.steps, device)
    check_same_update(model_kind, batches[0], device)
    kinds = ("vat", "ds3l", "plain_ds3l", "l2rw", "plain_l2rw")
    for kind in kinds:  # warm-up
        time_kind(kind, model_kind, batches[:3], device, clock)
    times = {kind: [] for kind in kinds}
    for r in range(args.repeats):  # interleaved, the order reversed every other repeat: drift hits all alike
        for kind in kinds if r % 2 == 0 else kinds[::-1]:
            times[kind].append(time_kind(kind, model_kind, batches, device, clock))
    med = {kind: statistics.median(v) for kind, v in times.items()}
    print(
        f"  per iteration ({model_kind}, {B} + {B} inputs, median of {args.repeats} x {args.steps} steps): "
        + ", ".join(f"{kind} {1e3 * med[kind]:.2f} ms" for kind in kinds)
    )
    print(
        f"    DS3L / VAT = {med['ds3l'] / med['vat']:.2f}x (paper C: about 3x), L2RW / VAT = "
        f"{med['l2rw'] / med['vat']:.2f}x; plain DS3L / VAT = {med['plain_ds3l'] / med['vat']:.2f}x, "
        f"plain L2RW / VAT = {med['plain_l2rw'] / med['vat']:.2f}x"
    )
    ok = True
    for name in ("ds3l", "l2rw"):
        ratio = med[name] / med["plain_" + name]
        passed = ratio <= TARGET_PLAIN
        ok &= passed
        print(
            f"    {name.upper()} ours / plain = {ratio:.3f} (target <= {TARGET_PLAIN}): {'PASS' if passed else 'FAIL'}"
        )
    return ok


# ---------------------------------------------------------------- part 2: Retrieve vs DS3L end to end


def end_to_end(args, device) -> bool:
    task = build_task(args.scale, 0.5, args.seed)
    kw = {"protocol": args.scale, "ratio": 0.5, "seed": args.seed, "task": task, "device": device}
    configs = {"ds3l": {"method": "ds3l"}, 0.1: {"method": "retrieve", "fraction": 0.1}}
    configs[0.5] = {"method": "retrieve", "fraction": 0.5}
    repeats = args.e2e_repeats if args.scale == "quick" else 1
    if args.scale == "quick":
        robust_run(**configs[0.1], **kw)  # warm-up (first-call overheads)
    runs = {key: [] for key in configs}
    for _ in range(repeats):  # interleaved, as in part 1
        for key, config in configs.items():
            runs[key].append(robust_run(**config, **kw))

    def med(key, clock):
        return statistics.median(r[clock] for r in runs[key])

    d = runs["ds3l"][0]
    print(
        f"  {args.scale}, OOD ratio 0.5, seed {args.seed}, median of {repeats}: DS3L {med('ds3l', 'seconds'):.2f} s "
        f"wall, {med('ds3l', 'cpu_seconds'):.2f} s CPU, {d['iterations']} iterations, {d['epochs']} epochs"
    )
    passes = []
    for f in (0.1, 0.5):
        r = runs[f][0]
        wall = med("ds3l", "seconds") / med(f, "seconds")
        cpu = med("ds3l", "cpu_seconds") / med(f, "cpu_seconds")
        reading = "CORDS config" if f == 0.1 else "the paper's hours"
        if wall >= TARGET_SPEEDUP:
            passes.append(f"{f} ({reading})")
        print(
            f"    Retrieve at {f} ({reading}): {med(f, 'seconds'):.2f} s wall, {med(f, 'cpu_seconds'):.2f} s CPU "
            f"(selection {med(f, 'selection_seconds'):.2f} s wall), {r['iterations']} iterations, {r['epochs']} "
            f"epochs; DS3L / Retrieve = {wall:.2f}x wall ({'PASS' if wall >= TARGET_SPEEDUP else 'FAIL'}), "
            f"{cpu:.2f}x CPU ({'PASS' if cpu >= TARGET_SPEEDUP else 'FAIL'}); target >= {TARGET_SPEEDUP:.0f}x wall"
        )
    print(f"    budget readings that pass (wall): {', '.join(passes) if passes else 'none'}")
    return len(passes) == 2


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="cnn", choices=("cnn", "mlp", "both"))
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--scale", default="quick", choices=("quick", "cpu"))
    ap.add_argument("--e2e-repeats", type=int, default=3, help="part 2 repeats at quick scale (cpu: 1)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--skip-e2e", action="store_true", help="part 1 only")
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args(argv)
    os.environ.setdefault("SSLKIT_PROGRESS", "0")
    torch.set_num_threads(1)
    device = resolve_device(args.device)
    cpu_clock = device.type == "cpu"
    clock = time.process_time if cpu_clock else time.perf_counter
    print(
        f"hardware: {hardware_summary(device)}; torch threads {torch.get_num_threads()}; load average "
        f"{os.getloadavg()[0]:.1f}; clock {'process CPU time' if cpu_clock else 'wall'}"
    )
    ok = True
    for model_kind in ("cnn", "mlp") if args.model == "both" else (args.model,):
        ok &= per_iteration(model_kind, args, device, clock)
    if not args.skip_e2e:
        ok &= end_to_end(args, device)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
