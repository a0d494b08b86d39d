"""ColossalAI: report each optimizer step of a boosted model.

    model, optimizer, criterion, _, _ = booster.boost(model, optimizer, criterion)
    trainwatch.colossalai.watch(booster, optimizer)
    for batch in loader:
        loss = criterion(model(batch)); booster.backward(loss, optimizer); optimizer.step()

The loss comes from booster.backward() (or booster.execute_pipeline()'s "loss"), the loss
scale and overflow from the optimizer's DynamicGradScaler (its update(overflow) is called
once per step by ColossalAI's mixed-precision optimizers), the pipeline stage from the
plugin's stage manager. A DynamicGradScaler used by hand can be watched alone with
watch_scaler(scaler).
"""
from ._helpers import as_float, current_run, first_attr, wrap_method

__all__ = ["watch", "watch_scaler", "find_scaler", "Watch"]

# Where ColossalAI's optimizers keep their DynamicGradScaler, across plugins and versions.
_SCALER_PATHS = ("grad_scaler", "mixed_precision.grad_scaler", "mixed_precision_mixin.grad_scaler",
                 "mix_precision_mixin.grad_scaler", "optim.grad_scaler", "optim.mixed_precision.grad_scaler")


def find_scaler(optimizer):
    """The DynamicGradScaler of a boosted optimizer, or None (bf16/fp32 have none)."""
    return first_attr(optimizer, *_SCALER_PATHS)


class Watch:
    def __init__(self, run, booster=None, optimizer=None, scaler=None, tokens_per_step=None):
        self.run = run
        self.step_count = 0
        self.last_loss = None
        self.last_overflow = None
        self.scaler = scaler
        self.tokens_per_step = tokens_per_step
        self._undo = []
        if booster is not None:
            self._undo.append(wrap_method(booster, "backward", self._after_backward))
            if callable(getattr(booster, "execute_pipeline", None)):
                self._undo.append(wrap_method(booster, "execute_pipeline", self._after_pipeline))
            stage = first_attr(booster, "plugin.stage_manager.stage")
            if stage is not None:
                run.colossalai(pipeline_stage=int(stage))
        if scaler is not None:
            self._undo.append(wrap_method(scaler, "update", self._after_update))
        if optimizer is not None:
            self._undo.append(wrap_method(optimizer, "step", self._after_step))
        run.colossalai(kernels_compiled=True)

    def unwatch(self):
        for undo in reversed(self._undo):  # last wrapper first, so each undo finds its own
            undo()
        self._undo = []

    def _after_backward(self, _result, args, kwargs):
        self.last_loss = args[0] if args else kwargs.get("loss")

    def _after_pipeline(self, result, _args, _kwargs):
        if isinstance(result, dict) and result.get("loss") is not None:
            self.last_loss = result["loss"]

    def _after_update(self, _result, args, kwargs):
        overflow = args[0] if args else kwargs.get("overflow")
        self.last_overflow = bool(overflow)

    def _after_step(self, _result, _args, _kwargs):
        self.step_count += 1
        report = {}
        loss = as_float(self.last_loss)
        if loss is not None:
            report["loss"] = loss
        if self.scaler is not None:
            scale = as_float(getattr(self.scaler, "scale", None))
            if scale is not None:
                report["loss_scale"] = scale
        if self.last_overflow is not None:
            report["overflow"] = self.last_overflow
            self.last_overflow = None
        if self.tokens_per_step:
            report["tokens"] = int(self.tokens_per_step)
        self.run.step(self.step_count, **report)

    def oom_event(self, count=1):
        """Count a Gemini OOM event (call it where the out-of-memory error is caught)."""
        self.run.colossalai(oom_events=count)


def watch(booster, optimizer, run=None, tokens_per_step=None):
    """Report every optimizer.step() of a boosted optimizer. Returns a Watch."""
    return Watch(current_run(run), booster=booster, optimizer=optimizer, scaler=find_scaler(optimizer),
                 tokens_per_step=tokens_per_step)


def watch_scaler(scaler, run=None):
    """Report overflow and loss scale from a DynamicGradScaler stepped by hand: each
    update(overflow) is one step."""
    w = Watch(current_run(run), scaler=scaler)
    w._undo.append(wrap_method(scaler, "update", lambda *_: w._after_step(None, (), {})))
    return w
