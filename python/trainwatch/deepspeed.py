"""DeepSpeed: report every optimizer step of an engine with no change to the loop.

    engine, optimizer, _, _ = deepspeed.initialize(...)
    trainwatch.deepspeed.watch(engine)          # after trainwatch.init(), or it calls init()
    for batch in loader:
        loss = engine(batch); engine.backward(loss); engine.step()

After each engine.step() at a gradient-accumulation boundary it reports global_steps, the
loss passed to the last engine.backward(), the loss scale, whether the step overflowed
(optimizer.overflow, fp16) and skipped_steps (as the gauge "skipped_steps").
"""
from ._helpers import as_float, current_run, first_attr, wrap_method

__all__ = ["watch", "Watch"]


class Watch:
    """What watch() installed; unwatch() puts the engine's methods back."""

    def __init__(self, engine, run, tokens_per_step=None):
        self.engine = engine
        self.run = run
        self.tokens_per_step = tokens_per_step
        self.last_loss = None
        self._last_reported = int(getattr(engine, "global_steps", 0))  # steps before watch() are not new
        self._undo = [wrap_method(engine, "backward", self._after_backward),
                      wrap_method(engine, "step", self._after_step)]

    def unwatch(self):
        for undo in reversed(self._undo):  # last wrapper first, so each undo finds its own
            undo()
        self._undo = []

    def _after_backward(self, _result, args, kwargs):
        loss = args[0] if args else kwargs.get("loss")
        self.last_loss = loss

    def _after_step(self, _result, _args, _kwargs):
        engine = self.engine
        step = int(getattr(engine, "global_steps", 0))
        # engine.step() is called every micro-step, but global_steps moves only at a gradient
        # accumulation boundary (overflowed steps included): report once per boundary.
        if step == self._last_reported:
            return
        self._last_reported = step
        optimizer = getattr(engine, "optimizer", None)
        report = {}
        loss = as_float(self.last_loss)
        if loss is not None:
            report["loss"] = loss
        scale = loss_scale(engine)
        if scale is not None:
            report["loss_scale"] = scale
        overflow = getattr(optimizer, "overflow", None)
        if overflow is not None:
            report["overflow"] = bool(overflow)
        if self.tokens_per_step:
            report["tokens"] = int(self.tokens_per_step)
        self.run.step(step, **report)
        skipped = getattr(engine, "skipped_steps", None)
        if skipped is not None:
            self.run.gauge("skipped_steps", float(skipped))


def loss_scale(engine):
    """The engine's current loss scale: FP16_Optimizer.cur_scale, ZeRO's loss_scale property
    or its loss_scaler.cur_scale; None under bf16/fp32."""
    optimizer = getattr(engine, "optimizer", None)
    value = first_attr(optimizer, "cur_scale", "loss_scale", "loss_scaler.cur_scale")
    return as_float(value)


def watch(engine, run=None, tokens_per_step=None):
    """Report every step of a DeepSpeed engine. Returns a Watch (keep it to unwatch())."""
    return Watch(engine, current_run(run), tokens_per_step)
