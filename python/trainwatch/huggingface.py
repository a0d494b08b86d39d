"""Hugging Face Transformers: a TrainerCallback.

    trainer = Trainer(..., callbacks=[trainwatch.huggingface.TrainwatchCallback()])

Reports state.global_step at each optimizer step with the latest logged loss and grad norm
(the Trainer logs them every logging_steps), evaluating while evaluation runs, each saved
checkpoint, and finished at the end of train(). Subclasses transformers.TrainerCallback when
transformers is importable; the Trainer only needs the on_* methods, so it works either way.
"""
import os

from ._helpers import current_run

try:
    from transformers import TrainerCallback as _Base
except Exception:  # not installed (or broken): the Trainer calls methods by name only
    _Base = object

__all__ = ["TrainwatchCallback"]


class TrainwatchCallback(_Base):
    def __init__(self, run=None, tokens_per_step=None):
        self._run = run
        self.tokens_per_step = tokens_per_step
        self.last_loss = None
        self.last_grad_norm = None
        self._evaluating = False

    @property
    def run(self):
        if self._run is None:
            self._run = current_run(None)
        return self._run

    # Every TrainerCallback event, so the Trainer finds each one even without transformers'
    # base class; the ones trainwatch has no use for do nothing.
    def _nothing(self, args, state, control, **kwargs):
        return None

    on_init_end = on_epoch_begin = on_epoch_end = on_step_begin = on_substep_end = _nothing
    on_pre_optimizer_step = on_optimizer_step = on_predict = _nothing

    def on_train_begin(self, args, state, control, **kwargs):
        self.run.status("training")

    def on_log(self, args, state, control, logs=None, **kwargs):
        logs = logs or {}
        if "loss" in logs:
            self.last_loss = logs["loss"]
        if "grad_norm" in logs:
            self.last_grad_norm = logs["grad_norm"]

    def on_step_end(self, args, state, control, **kwargs):
        report = {}
        if self.last_loss is not None:
            report["loss"] = float(self.last_loss)
        if self.last_grad_norm is not None:
            report["grad_norm"] = float(self.last_grad_norm)
        if self.tokens_per_step:
            report["tokens"] = int(self.tokens_per_step)
        self.run.step(int(state.global_step), **report)

    def on_prediction_step(self, args, state, control, **kwargs):
        # Inside train() only evaluation runs prediction steps; mark it once per evaluation.
        if not self._evaluating:
            self._evaluating = True
            self.run.status("evaluating")

    def on_evaluate(self, args, state, control, **kwargs):
        # Called when evaluation has finished: training resumes.
        self._evaluating = False
        self.run.status("training")

    def on_save(self, args, state, control, **kwargs):
        # The Trainer calls this after the checkpoint is on disk: record it as a finished one.
        step = int(state.global_step)
        path = os.path.join(str(getattr(args, "output_dir", "")), f"checkpoint-{step}")
        with self.run.checkpoint(step, path):
            pass

    def on_train_end(self, args, state, control, **kwargs):
        self.run.status("finished")
