"""sslkit.engine.trainer: training, batching, the schedule in the loop, early stopping, hooks, seeding, timing,
progress and mixed precision. The optimiser and EMA: test_engine_optim.py; input checks: test_engine_inputs.py;
the sampler: test_engine_sampling.py. Uses a tiny local MLP (tests/engine_problem.py)."""

import math
import time

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from engine_problem import ConstNet, Recorder, TinyNet, blobs, net, quiet, strip_seconds

import sslkit.device as device_module
import sslkit.engine.trainer as trainer_module
from sslkit.algorithms import Hook, LossOutput, SSLAlgorithm, Supervised
from sslkit.engine import EarlyStopping, Trainer

torch.set_num_threads(1)


# ------------------------------------------------------------------------------------------ training


def test_supervised_reaches_high_accuracy_and_loss_decreases():
    X, y = blobs(600, seed=0)
    Xt, yt = blobs(400, seed=1)
    tr = quiet(net(0), lr=1e-2, epochs=15, batch_size=32).fit(X[:200], y[:200], X_val=X[200:], y_val=y[200:])
    assert tr.score(Xt, yt) > 0.95
    losses = [r["loss"] for r in tr.history_]
    assert losses[-1] < 0.5 * losses[0]
    assert tr.epochs_run_ == 15 and len(tr.history_) == 15
    assert [r["epoch"] for r in tr.history_] == list(range(1, 16))
    assert all(r["iterations"] == math.ceil(200 / 32) for r in tr.history_)
    assert set(tr.history_[0]) == {"epoch", "iterations", "loss", "val_acc", "lr", "seconds"}
    assert tr.device_ == torch.device("cpu") and tr.num_classes_ == 2
    assert tr.best_val_acc_ == max(r["val_acc"] for r in tr.history_)


def test_logs_are_averaged_per_epoch():
    X, y = blobs(64)
    algo = Recorder()
    tr = quiet(net(0), algo, epochs=2, batch_size=16).fit(X, y)
    ces = [c["ce"] for c in algo.calls]
    assert tr.history_[0]["loss"] == pytest.approx(np.mean(ces[:4]), rel=1e-12)
    assert tr.history_[1]["loss"] == pytest.approx(np.mean(ces[4:]), rel=1e-12)
    assert tr.history_[0]["extra"] == 2.0
    assert len(algo.calls) == 8 and [c["step"] for c in algo.calls] == list(range(8))


def test_determinism_same_seed_identical_different_seed_differs():
    X, y = blobs(200)
    Xu = np.random.default_rng(3).normal(size=(300, 2))

    def run(seed, noise):
        model = net(0, dropout=0.3)
        torch.manual_seed(noise)  # fit must reseed the global RNG (dropout) itself
        tr = quiet(
            model, Recorder(uses_unlabeled=True), epochs=3, batch_size=16, unlabeled_batch_size=32, seed=seed
        ).fit(X[:100], y[:100], X_u=Xu, X_val=X[100:], y_val=y[100:])
        return tr, model.state_dict()

    (a, wa), (b, wb), (c, wc) = run(5, 1), run(5, 2), run(6, 1)
    assert strip_seconds(a.history_) == strip_seconds(b.history_)
    assert all(torch.equal(wa[k], wb[k]) for k in wa)
    assert all(torch.equal(p["x_u"], q["x_u"]) for p, q in zip(a.algorithm.calls, b.algorithm.calls))
    assert strip_seconds(a.history_) != strip_seconds(c.history_)
    assert not all(torch.equal(wa[k], wc[k]) for k in wa)


# ------------------------------------------------------------------------------------------ batching


def test_labeled_epoch_is_one_pass_and_unlabeled_batches_have_requested_size():
    n_l, n_u = 100, 1000
    X_l = np.stack([np.arange(n_l, dtype=float), np.zeros(n_l)], axis=1)  # column 0 = row id
    y_l = np.arange(n_l) % 2
    X_u = np.stack([np.arange(n_u, dtype=float), np.ones(n_u)], axis=1)
    algo = Recorder(uses_unlabeled=True)
    quiet(net(0), algo, epochs=3, batch_size=32, unlabeled_batch_size=48, lr=1e-6).fit(X_l, y_l, X_u=X_u)
    calls = algo.calls
    assert len(calls) == 3 * 4
    assert [c["x_l"].shape[0] for c in calls] == [32, 32, 32, 4] * 3  # last partial batch kept
    for e in range(3):  # each epoch sees every labeled row exactly once, labels aligned with rows
        ids = torch.cat([c["x_l"][:, 0] for c in calls[4 * e : 4 * e + 4]]).long()
        assert sorted(ids.tolist()) == list(range(n_l))
        ys = torch.cat([c["y_l"] for c in calls[4 * e : 4 * e + 4]])
        assert torch.equal(ys, ids % 2)
    orders = [torch.cat([c["x_l"][:, 0] for c in calls[4 * e : 4 * e + 4]]) for e in range(3)]
    assert not torch.equal(orders[0], orders[1])  # reshuffled each epoch
    assert all(c["x_u"].shape == (48, 2) for c in calls)
    assert all(torch.all(c["x_u"][:, 1] == 1) for c in calls)
    u_ids = torch.cat([c["x_u"][:, 0] for c in calls]).long()  # 12 * 48 = 576 < 1000: no repeats yet
    assert len(set(u_ids.tolist())) == 576


def test_unlabeled_not_drawn_when_algorithm_does_not_use_it():
    X, y = blobs(40)
    algo = Recorder(uses_unlabeled=False)
    quiet(net(0), algo, epochs=1, batch_size=16).fit(X, y, X_u=np.full((50, 2), np.nan))  # ignored entirely
    assert len(algo.calls) == 3 and all(c["x_u"] is None for c in algo.calls)


def test_unlabeled_stream_cycles_and_small_unlabeled_set():
    X, y = blobs(32)
    X_u = np.stack([np.arange(10, dtype=float), np.zeros(10)], axis=1)
    algo = Recorder(uses_unlabeled=True)
    quiet(net(0), algo, epochs=2, batch_size=16, unlabeled_batch_size=64).fit(X, y, X_u=X_u)
    for c in algo.calls:  # batch capped at n_u = 10: each batch is one permutation of U
        assert sorted(c["x_u"][:, 0].long().tolist()) == list(range(10))


def test_iterations_per_epoch_fixed_count_and_full_batches():
    X, y = blobs(50)
    algo = Recorder()
    tr = quiet(net(0), algo, epochs=2, iterations_per_epoch=7, batch_size=16).fit(X, y)
    assert [r["iterations"] for r in tr.history_] == [7, 7]
    assert all(c["x_l"].shape[0] == 16 for c in algo.calls) and len(algo.calls) == 14
    algo2 = Recorder()
    quiet(net(0), algo2, epochs=1, iterations_per_epoch=3, batch_size=64).fit(X[:20], y[:20])
    assert all(c["x_l"].shape[0] == 20 for c in algo2.calls)


# ------------------------------------------------------------------------------------------ schedule


# ----------------------------------------------------------------------------------------------- EMA


# ----------------------------------------------------------------------------------- early stopping


class ScriptedTrainer(Trainer):
    """Validation accuracy follows a fixed script (one value per epoch)."""

    def __init__(self, *a, script=(), **kw):
        super().__init__(*a, **kw)
        self.script = list(script)

    def _accuracy(self, X, y, batch_size=1024):
        return self.script[self.epoch - 1]


def scripted(script, **kw):
    """A supervised ScriptedTrainer on net(0), batches of 16, quiet, on the CPU."""
    return ScriptedTrainer(net(0), Supervised(), device="cpu", progress=False, batch_size=16, script=script, **kw)


def test_early_stopping_real_model_that_cannot_improve_restores_best():
    X, y = blobs(64)  # balanced: ConstNet always has validation accuracy 0.5
    model = ConstNet()
    snaps = []
    tr = quiet(
        model,
        lr=0.05,
        epochs=50,
        batch_size=16,
        early_stopping=EarlyStopping(patience=2, min_delta=1e-4),
        hooks=[Hook(lambda t: snaps.append(t.model.bias.detach().clone()))],
    )
    tr.fit(X, y, X_val=X, y_val=y)
    assert tr.epochs_run_ == 3 and len(tr.history_) == 3
    assert [r["val_acc"] for r in tr.history_] == [0.5, 0.5, 0.5]
    assert tr.best_epoch_ == 1 and tr.best_val_acc_ == 0.5
    assert not torch.equal(snaps[0], snaps[2])  # weights moved after epoch 1 ...
    assert torch.equal(model.bias.detach(), snaps[0])  # ... and the epoch-1 weights were restored


def test_early_stopping_scripted_patience_and_restore():
    X, y = blobs(64)
    snaps = []
    tr = scripted(
        [0.5, 0.6, 0.55, 0.6, 0.6, 0.7, 0.9],
        lr=0.05,
        epochs=20,
        early_stopping=EarlyStopping(patience=3),
        hooks=[Hook(lambda t: snaps.append({k: v.clone() for k, v in t.model.state_dict().items()}))],
    )
    tr.fit(X, y, X_val=X, y_val=y)
    assert tr.epochs_run_ == 5 and tr.best_epoch_ == 2 and tr.best_val_acc_ == 0.6
    final = tr.model.state_dict()
    assert all(torch.equal(final[k], snaps[1][k]) for k in final)


def test_min_delta_semantics():
    X, y = blobs(32)
    tr = scripted([0.25, 0.5, 0.5000001, 0.76], epochs=4, early_stopping=EarlyStopping(patience=10, min_delta=0.25))
    tr.fit(X, y, X_val=X, y_val=y)
    # 0.5 is not > 0.25 + 0.25; 0.5000001 is; 0.76 > 0.5000001 + 0.25
    assert tr.best_epoch_ == 4 and tr.best_val_acc_ == 0.76
    es = EarlyStopping()
    assert (es.patience, es.min_delta) == (20, 1e-4)
    assert es.is_improvement(0.80011, 0.8) and not es.is_improvement(0.80005, 0.8)
    assert not EarlyStopping(min_delta=0.0).is_improvement(0.8, 0.8)


def test_without_early_stopping_final_weights_kept_best_reported():
    X, y = blobs(32)
    tr = scripted([0.9, 0.5, 0.5], epochs=3)
    snaps = []
    tr.hooks = [Hook(lambda t: snaps.append({k: v.clone() for k, v in t.model.state_dict().items()}))]
    tr.fit(X, y, X_val=X, y_val=y)
    assert tr.epochs_run_ == 3 and tr.best_epoch_ == 1
    assert all(torch.equal(tr.model.state_dict()[k], snaps[2][k]) for k in snaps[2])


def test_early_stopping_without_validation_is_an_error_only_when_requested():
    X, y = blobs(32)
    with pytest.raises(ValueError, match="early_stopping"):
        quiet(net(0), epochs=1, early_stopping=EarlyStopping()).fit(X, y)
    tr = quiet(net(0), epochs=1).fit(X, y)
    assert tr.best_epoch_ is None and tr.best_val_acc_ is None and "val_acc" not in tr.history_[0]


# --------------------------------------------------------------------------------------------- hooks


class HookedAlgo(Recorder):
    def __init__(self):
        super().__init__()
        self.epochs_seen = []

    def hooks(self):
        return [Hook(lambda t: self.epochs_seen.append(t.epoch), every=1, unit="epoch", name="algo_hook")]


def test_hooks_called_exact_number_of_times():
    X, y = blobs(100)  # 4 iterations per epoch at batch 32
    ep, it = [], []
    algo = HookedAlgo()
    tr = quiet(
        net(0),
        algo,
        epochs=5,
        batch_size=32,
        hooks=[
            Hook(lambda t: ep.append((t.epoch, len(t.history_))), every=2, unit="epoch"),
            Hook(lambda t: it.append(t.iteration), every=3, unit="iteration", name="it"),
        ],
    )
    tr.fit(X, y)
    assert ep == [(2, 2), (4, 4)]
    assert it == [3, 6, 9, 12, 15, 18]
    assert algo.epochs_seen == [1, 2, 3, 4, 5]
    assert {"hook:algo_hook", "hook:it", "hook:<lambda>"} <= set(tr.timings_)


def test_hook_can_stop_training_mid_epoch_and_sees_train_mode_preserved():
    X, y = blobs(100)
    algo = Recorder()

    def stopper(t):
        t.score(X, y)  # evaluation inside training must not leave the model in eval mode
        if t.iteration == 5:
            t.stop_training = True

    tr = quiet(net(0, dropout=0.2), algo, epochs=10, batch_size=32, hooks=[Hook(stopper, unit="iteration")]).fit(X, y)
    assert tr.epochs_run_ == 2 and [r["iterations"] for r in tr.history_] == [4, 1]
    assert all(c["training"] for c in algo.calls)


# -------------------------------------------------------------------------------------------- timing


def test_timings_present_nonnegative_and_consistent():
    X, y = blobs(64)
    tr = quiet(net(0), epochs=2, batch_size=16, hooks=[Hook(lambda t: time.sleep(0.02), name="nap")])
    tr.fit(X, y, X_val=X, y_val=y)
    t = tr.timings_
    assert {"setup", "train", "eval", "hooks", "total", "hook:nap"} <= set(t)
    assert all(v >= 0 for v in t.values())
    assert t["hooks"] == t["hook:nap"] >= 0.04
    assert t["setup"] + t["train"] + t["eval"] + t["hooks"] <= t["total"] + 1e-9
    assert t["train"] > 0 and t["eval"] > 0
    assert all(r["seconds"] > 0 for r in tr.history_)


# ------------------------------------------------------------------------------------------ progress


def test_progress_silenced_and_enabled(capsys, monkeypatch):
    X, y = blobs(32)
    monkeypatch.delenv("SSLKIT_PROGRESS", raising=False)
    quiet(net(0), epochs=2, progress=False).fit(X, y)
    out = capsys.readouterr()
    assert out.err == "" and out.out == ""
    monkeypatch.setenv("SSLKIT_PROGRESS", "0")
    quiet(net(0), epochs=2, progress=True).fit(X, y)
    out = capsys.readouterr()
    assert out.err == "" and out.out == ""
    monkeypatch.delenv("SSLKIT_PROGRESS")
    quiet(net(0), epochs=2, progress=True).fit(X, y)
    assert "supervised" in capsys.readouterr().err  # positive control: the bar is printed


# ---------------------------------------------------------------------------------- amp and devices


# -------------------------------------------------------------------------------------- validation


def test_bad_model_algorithm_and_loss_output():
    with pytest.raises(TypeError, match="model"):
        Trainer(lambda x: x, Supervised())
    with pytest.raises(TypeError, match="algorithm"):
        Trainer(net(0), "supervised")

    class Bad(SSLAlgorithm):
        def loss(self, model, batch):
            return model(batch.x_l)[0].sum()

    X, y = blobs(20)
    with pytest.raises(TypeError, match="LossOutput"):
        quiet(net(0), Bad(), epochs=1).fit(X, y)
    with pytest.raises(RuntimeError, match="fit"):
        quiet(net(0)).predict(X)


def test_non_finite_loss_raises():
    class Exploding(SSLAlgorithm):
        def loss(self, model, batch):
            return LossOutput(model(batch.x_l)[0].sum() * float("nan"))

    X, y = blobs(20)
    with pytest.raises(FloatingPointError, match="epoch 1"):
        quiet(net(0), Exploding(), epochs=2).fit(X, y)


@pytest.mark.parametrize("bf16", [True, False])
def test_mixed_precision_code_path_simulated_on_cpu(monkeypatch, bf16):
    """The CUDA autocast/GradScaler path, exercised on CPU by pretending AMP is available."""

    monkeypatch.setattr(trainer_module, "resolve_amp", lambda amp, device: True)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: bf16)
    X, y = blobs(200)
    Xt, yt = blobs(200, seed=1)
    dtypes = []

    class Probe(Supervised):
        def loss(self, model, batch):
            dtypes.append(model(batch.x_l)[0].dtype)
            return super().loss(model, batch)

    tr = quiet(net(0), Probe(), lr=1e-2, epochs=10, batch_size=32).fit(X, y)
    want = torch.bfloat16 if bf16 else torch.float16
    assert tr.amp_dtype_ == want and set(dtypes) == {want}
    assert tr.predict_proba(X).dtype == np.float32 and tr.score(Xt, yt) > 0.95


def test_hooks_see_the_data_on_the_device():
    seen = {}
    X = np.random.default_rng(1).normal(size=(20, 2)).astype(np.float32)
    y = (X[:, 0] > 0).astype(np.int64)

    def grab(tr):
        seen.update({k: (None if v is None else tuple(v.shape)) for k, v in tr.data_.items()})

    Trainer(TinyNet(), Supervised(), epochs=1, hooks=[Hook(grab)], progress=False).fit(X, y, X_val=X[:5], y_val=y[:5])
    assert seen == {"X_l": (20, 2), "y_l": (20,), "X_u": None, "X_val": (5, 2), "y_val": (5,)}


def test_every_batch_carries_the_unlabeled_indices():
    X = np.random.default_rng(2).normal(size=(16, 2)).astype(np.float32)
    y = (X[:, 0] > 0).astype(np.int64)
    Xu = torch.arange(40, dtype=torch.float32).repeat(2, 1).T.contiguous()  # row i holds (i, i)
    seen = []

    class WantsIdx(SSLAlgorithm):
        uses_unlabeled = True

        def loss(self, model, batch):
            seen.append(bool(torch.equal(batch.x_u[:, 0].long(), batch.u_idx)) and batch.u_weight is None)
            logits, _ = model(batch.x_l)
            return LossOutput(F.cross_entropy(logits, batch.y_l), {})

    Trainer(TinyNet(), WantsIdx(), epochs=2, batch_size=8, unlabeled_batch_size=10, progress=False).fit(X, y, Xu)
    assert seen and all(seen)


def test_early_stopping_does_not_monitor_the_warm_up_epochs():
    X = np.random.default_rng(3).normal(size=(20, 2)).astype(np.float32)
    y = (X[:, 0] > 0).astype(np.int64)
    tr = Trainer(
        TinyNet(),
        Supervised(),
        epochs=50,
        lr=1e-9,
        progress=False,
        early_stopping=EarlyStopping(patience=3, min_delta=0.5, start_epoch=10),
    )
    tr.fit(X, y, X_val=X, y_val=y)
    # nothing can improve by 0.5: the first monitored epoch (11) is the best, then 3 epochs of patience
    assert tr.best_epoch_ == 11 and tr.epochs_run_ == 14
    with pytest.raises(ValueError, match="start_epoch"):
        EarlyStopping(start_epoch=-1)
    # watch_warmup: the warm-up epochs compete for the best weights; patience still counts after them only
    tr = Trainer(
        TinyNet(),
        Supervised(),
        epochs=50,
        lr=1e-9,
        progress=False,
        early_stopping=EarlyStopping(patience=3, min_delta=0.5, start_epoch=10, watch_warmup=True),
    )
    tr.fit(X, y, X_val=X, y_val=y)
    assert tr.best_epoch_ == 1 and tr.epochs_run_ == 13
    with pytest.raises(TypeError, match="watch_warmup"):
        EarlyStopping(watch_warmup="yes")


# --- threads: torch's CPU threads while fit trains (issue 48: a busy machine) -------------------------------------


def _thread_probe(model, **kw):
    """Fit ``model`` one epoch on 16 blobs; return the trainer and the thread counts its epochs ran under."""
    seen = []
    X = torch.randn(16, 2, generator=torch.Generator().manual_seed(0))
    y = (X[:, 0] > 0).long()
    hook = Hook(lambda tr: seen.append(torch.get_num_threads()), unit="iteration")
    tr = Trainer(model, Supervised(), device="cpu", epochs=1, batch_size=8, progress=False, hooks=[hook], **kw)
    return tr.fit(X, y), seen


def test_auto_threads_one_thread_for_a_small_step_restored_after():
    before = torch.get_num_threads()
    tr, seen = _thread_probe(torch.nn.Linear(2, 2))
    assert tr.step_flops_ == 2 * 2 * 2 * 8  # one 2x2 product per sample, 8 samples (no unlabeled batch)
    assert tr.threads_ == 1 and seen == [1, 1]
    assert torch.get_num_threads() == before


def test_auto_threads_keep_torch_threads_for_a_large_step():
    wide = torch.nn.Sequential(torch.nn.Linear(2, 4096), torch.nn.Linear(4096, 4096), torch.nn.Linear(4096, 2))
    tr, seen = _thread_probe(wide)
    assert tr.step_flops_ > device_module.SMALL_STEP_FLOPS
    assert tr.threads_ == torch.get_num_threads() and set(seen) == {torch.get_num_threads()}


def test_threads_none_leaves_torch_alone_and_an_int_sets_it():
    before = torch.get_num_threads()
    tr, seen = _thread_probe(torch.nn.Linear(2, 2), threads=None)
    assert tr.threads_ == before and set(seen) == {before}
    tr, seen = _thread_probe(torch.nn.Linear(2, 2), threads=3)
    assert tr.threads_ == 3 and set(seen) == {3}
    assert torch.get_num_threads() == before
    assert Trainer(torch.nn.Linear(2, 2), Supervised(), threads=np.int64(2)).get_params()["threads"] == 2


@pytest.mark.parametrize("bad", [0, -1, 1.5, "two", True])
def test_bad_threads_refused_by_name(bad):
    with pytest.raises(ValueError, match="threads must be 'auto', None or a positive int"):
        Trainer(torch.nn.Linear(2, 2), Supervised(), threads=bad)


def test_step_flops_count_the_unlabeled_batch_of_an_ssl_algorithm():
    """A step of an algorithm that uses unlabeled data forwards the labeled and the unlabeled batch: both count
    toward the "auto" threshold (a count of the labeled batch alone would keep large SSL steps on one thread)."""
    from sslkit.algorithms import PseudoLabel

    X = torch.randn(16, 2, generator=torch.Generator().manual_seed(0))
    y = (X[:, 0] > 0).long()
    tr = Trainer(torch.nn.Linear(2, 2), PseudoLabel(), device="cpu", epochs=1, batch_size=8, progress=False)
    tr.set_params(unlabeled_batch_size=24).fit(X, y, X_u=torch.randn(40, 2))
    assert tr.step_flops_ == 2 * 2 * 2 * (8 + 24)
