"""Framework helpers in real processes. DeepSpeed, ColossalAI, Transformers and Lightning
cannot be installed here, so each child drives a stand-in with the attributes and call
order the real framework has, around a real PyTorch model, optimizer and loss tensors; the
test reads what arrived through the agent's /health."""
import subprocess
import textwrap

from test_trainwatch import PY, get_health, start_agent, wait_for

PRELUDE = """
import sys, torch, trainwatch
torch.manual_seed(0)
model = torch.nn.Linear(4, 1)
torch_opt = torch.optim.SGD(model.parameters(), lr=0.01)
def batch():
    x = torch.randn(8, 4)
    return x, x.sum(dim=1, keepdim=True)
def real_loss():
    x, y = batch()
    return torch.nn.functional.mse_loss(model(x), y)
tw = trainwatch.init(rank=0, world_size=1)
"""


def run_child(env, body):
    """Runs PRELUDE + body in a child, which then prints 'ready' and waits for stdin to
    close. Returns the child and the float it printed first (the last real loss)."""
    code = textwrap.dedent(PRELUDE) + textwrap.dedent(body) + "\nprint('ready', flush=True)\nsys.stdin.read()\n"
    p = subprocess.Popen([PY, "-c", code], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    first = p.stdout.readline().strip()
    try:
        return p, float(first)
    except ValueError:
        p.kill()
        raise AssertionError(f"child failed: {first!r} {p.stderr.read()}")


def rank0_when(port, pred):
    def probe():
        _, h = get_health(port)
        return h["ranks"][0] if h["ranks"] and pred(h["ranks"][0]) else None
    return wait_for(probe, limit=10)


def finish(p):
    p.stdin.close()
    assert p.wait(timeout=30) == 0, p.stderr.read()


def test_deepspeed_engine(env):
    port = start_agent(env)
    p, last_loss = run_child(env, """
        import trainwatch.deepspeed

        class FP16Optimizer:  # DeepSpeed's FP16_Optimizer: overflow flag and cur_scale
            def __init__(self, inner):
                self.inner, self.overflow, self.cur_scale = inner, False, 65536.0

        class Engine:  # DeepSpeedEngine with gradient_accumulation_steps=2
            def __init__(self):
                self.optimizer = FP16Optimizer(torch_opt)
                self.global_steps = self.skipped_steps = self.micro_steps = 0
                self.overflow_at = {3, 4}
            def __call__(self, x):
                return model(x)
            def backward(self, loss):
                loss.backward()
                return loss
            def step(self):
                self.micro_steps += 1
                if self.micro_steps % 2:
                    return
                self.optimizer.overflow = (self.global_steps + 1) in self.overflow_at
                if self.optimizer.overflow:
                    self.skipped_steps += 1
                    self.optimizer.cur_scale /= 2
                else:
                    self.optimizer.inner.step()
                self.optimizer.inner.zero_grad()
                self.global_steps += 1

        engine = Engine()
        watch = trainwatch.deepspeed.watch(engine, tokens_per_step=512)
        last = None
        for _ in range(20):  # 10 optimizer steps
            x, y = batch()
            loss = torch.nn.functional.mse_loss(engine(x), y)
            engine.backward(loss)
            engine.step()
            last = loss.item()
        print(repr(last), flush=True)
    """)
    try:
        r = rank0_when(port, lambda r: r["step"] == 10)
        assert r["loss"] == last_loss
        assert r["loss_scale"] == 16384.0
        assert r["overflow_steps"] == 2 and r["overflow_consecutive"] == 0
        assert r["gauges"] == {"skipped_steps": 2.0}
        assert r["tokens"] == 10 * 512, "one report per optimizer step, not per micro-step"
    finally:
        finish(p)


def test_colossalai_booster_and_dynamic_grad_scaler(env):
    port = start_agent(env)
    p, last_loss = run_child(env, """
        import trainwatch.colossalai

        class DynamicGradScaler:  # colossalai.amp.naive_amp.grad_scaler.DynamicGradScaler
            def __init__(self):
                self._scale = torch.tensor([65536.0])
            @property
            def scale(self):
                return self._scale
            def update(self, overflow):
                if overflow:
                    self._scale = self._scale / 2

        class MixedPrecisionOptimizer:  # its mixin calls grad_scaler.update(found_inf) in step()
            def __init__(self):
                self.mixed_precision = type("Mixin", (), {})()
                self.mixed_precision.grad_scaler = DynamicGradScaler()
                self.n = 0
            def step(self):
                self.n += 1
                overflow = self.n == 2
                self.mixed_precision.grad_scaler.update(overflow)
                if not overflow:
                    torch_opt.step()
                torch_opt.zero_grad()

        class Booster:
            def __init__(self):
                self.plugin = type("Plugin", (), {})()
                self.plugin.stage_manager = type("StageManager", (), {"stage": 1})()
            def backward(self, loss, optimizer):
                loss.backward()

        booster, optimizer = Booster(), MixedPrecisionOptimizer()
        trainwatch.colossalai.watch(booster, optimizer)
        for _ in range(5):
            loss = real_loss()
            booster.backward(loss, optimizer)
            optimizer.step()
        print(repr(loss.item()), flush=True)
    """)
    try:
        r = rank0_when(port, lambda r: r["step"] == 5)
        assert r["loss"] == last_loss
        assert r["loss_scale"] == 32768.0 and r["overflow_steps"] == 1
        _, h = get_health(port)
        assert h["training"]["pipeline_stage"] == 1 and h["training"]["kernels_compiled"] is True
    finally:
        finish(p)


def test_colossalai_scaler_alone(env):
    env = dict(env, TRAINWATCH_JOB="pytest-scaler")
    port = start_agent(env)
    p, last_loss = run_child(env, """
        import trainwatch.colossalai

        class DynamicGradScaler:  # (the last printed value is its scale, not a loss)
            def __init__(self):
                self.scale = torch.tensor([1024.0])
            def update(self, overflow):
                if overflow:
                    self.scale = self.scale / 2

        scaler = DynamicGradScaler()
        w = trainwatch.colossalai.watch_scaler(scaler)
        for overflow in (False, True, True):
            scaler.update(overflow)
        w.unwatch()
        scaler.update(True)  # after unwatch: not reported
        print(repr(float(scaler.scale)), flush=True)
    """)
    try:
        assert last_loss == 128.0, "the scaler still works after unwatch()"
        r = rank0_when(port, lambda r: r["step"] == 3)
        assert r["overflow_steps"] == 2 and r["overflow_consecutive"] == 2
        assert r["loss_scale"] == 256.0
    finally:
        finish(p)


def test_huggingface_trainer_callback(env, tmp_path):
    port = start_agent(env)
    p, last_loss = run_child(env, f"""
        import trainwatch.huggingface
        from types import SimpleNamespace

        cb = trainwatch.huggingface.TrainwatchCallback()
        args = SimpleNamespace(output_dir={str(tmp_path)!r}, logging_steps=2)
        state = SimpleNamespace(global_step=0)
        control = SimpleNamespace()
        # The order transformers.Trainer calls its CallbackHandler in, one epoch of 4 steps.
        cb.on_init_end(args, state, control)
        cb.on_train_begin(args, state, control, model=model)
        cb.on_epoch_begin(args, state, control)
        for _ in range(4):
            cb.on_step_begin(args, state, control)
            loss = real_loss()
            loss.backward()
            cb.on_pre_optimizer_step(args, state, control)
            torch_opt.step()
            cb.on_optimizer_step(args, state, control)
            torch_opt.zero_grad()
            state.global_step += 1
            if state.global_step % args.logging_steps == 0:
                cb.on_log(args, state, control, logs={{"loss": loss.item(), "grad_norm": 0.75}})
            cb.on_step_end(args, state, control)
        cb.on_prediction_step(args, state, control)
        print(repr(loss.item()), flush=True)
        sys.stdin.readline()  # the test reads /health while evaluating
        cb.on_evaluate(args, state, control, metrics={{"eval_loss": 1.0}})
        cb.on_save(args, state, control)
        print("saved", flush=True)
        sys.stdin.readline()
        cb.on_train_end(args, state, control)
    """)
    try:
        r = rank0_when(port, lambda r: r["step"] == 4 and r["status"] == "evaluating")
        assert r["loss"] == last_loss and r["grad_norm"] == 0.75
        p.stdin.write("\n")
        p.stdin.flush()
        assert p.stdout.readline().strip() == "saved"
        r = rank0_when(port, lambda r: r["last_checkpoint_step"] == 4)
        assert r["status"] == "training"
        p.stdin.write("\n")
        p.stdin.flush()
        rank0_when(port, lambda r: r["status"] == "finished")
    finally:
        finish(p)


def test_lightning_callback(env):
    port = start_agent(env)
    p, last_loss = run_child(env, """
        import trainwatch.lightning
        from types import SimpleNamespace

        class Scaler:  # torch.cuda.amp.GradScaler's interface, as Lightning's 16-mixed plugin holds it
            def get_scale(self):
                return 2048.0

        trainer = SimpleNamespace(global_step=0, sanity_checking=False,
                                  precision_plugin=SimpleNamespace(scaler=Scaler()))
        cb = trainwatch.lightning.TrainwatchCallback()
        cb.on_train_start(trainer, model)
        for i in range(3):
            loss = real_loss()
            loss.backward()
            torch_opt.step()
            torch_opt.zero_grad()
            trainer.global_step += 1
            cb.on_train_batch_end(trainer, model, {"loss": loss.detach()}, None, i)
        cb.on_save_checkpoint(trainer, model, {})
        print(repr(loss.item()), flush=True)
        try:
            raise RuntimeError("CUDA out of memory (stand-in)")
        except RuntimeError as exc:
            cb.on_exception(trainer, model, exc)
    """)
    try:
        r = rank0_when(port, lambda r: r["status"] == "failed")
        assert r["step"] == 3 and r["loss"] == last_loss and r["loss_scale"] == 2048.0
        assert r["last_checkpoint_step"] == 3
        assert "CUDA out of memory" in r["error"]
    finally:
        finish(p)


def test_helpers_never_break_the_framework(env):
    """A value the helper cannot read is reported on stderr once; the framework call goes on."""
    p = subprocess.run([PY, "-c", textwrap.dedent(PRELUDE) + textwrap.dedent("""
        import trainwatch.deepspeed

        class Engine:
            optimizer = None
            global_steps = 0
            @property
            def skipped_steps(self):
                raise RuntimeError("boom")
            def backward(self, loss):
                return "backward-result"
            def step(self):
                self.global_steps += 1
                return "step-result"

        e = Engine()
        trainwatch.deepspeed.watch(e)
        assert e.backward(real_loss()) == "backward-result"
        assert [e.step() for _ in range(3)] == ["step-result"] * 3
        print("ok", flush=True)
    """)], env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "ok"
    assert p.stderr.count("reporting after Engine.step failed") == 1, p.stderr
