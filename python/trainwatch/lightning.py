"""PyTorch Lightning: a Callback.

    trainer = L.Trainer(..., callbacks=[trainwatch.lightning.TrainwatchCallback()])

Reports trainer.global_step after each training batch with the batch's loss (the
training_step's returned loss) and, under 16-bit mixed precision, the GradScaler's scale;
evaluating during validation; each saved checkpoint; failed with the exception when fit
raises; finished at the end of fit. Subclasses lightning's Callback when lightning (or
pytorch_lightning) is importable, since the Trainer accepts only Callback instances.
"""
from ._helpers import as_float, current_run, first_attr

try:
    from lightning.pytorch import Callback as _Base
except Exception:
    try:
        from pytorch_lightning import Callback as _Base
    except Exception:  # neither installed: a plain class with the same hooks
        _Base = object

__all__ = ["TrainwatchCallback"]


def _batch_loss(outputs):
    if isinstance(outputs, dict):
        outputs = outputs.get("loss")
    return as_float(outputs)


class TrainwatchCallback(_Base):
    def __init__(self, run=None, tokens_per_step=None):
        super().__init__()
        self._run = run
        self.tokens_per_step = tokens_per_step

    @property
    def run(self):
        if self._run is None:
            self._run = current_run(None)
        return self._run

    def on_train_start(self, trainer, pl_module):
        self.run.status("training")

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        report = {}
        loss = _batch_loss(outputs)
        if loss is not None:
            report["loss"] = loss
        scaler = first_attr(trainer, "precision_plugin.scaler", "strategy.precision_plugin.scaler")
        if scaler is not None and callable(getattr(scaler, "get_scale", None)):
            report["loss_scale"] = float(scaler.get_scale())
        if self.tokens_per_step:
            report["tokens"] = int(self.tokens_per_step)
        self.run.step(int(trainer.global_step), **report)

    def on_validation_start(self, trainer, pl_module):
        if not getattr(trainer, "sanity_checking", False):
            self.run.status("evaluating")

    def on_validation_end(self, trainer, pl_module):
        if not getattr(trainer, "sanity_checking", False):
            self.run.status("training")

    def on_save_checkpoint(self, trainer, pl_module, checkpoint):
        # Lightning calls this while building the checkpoint, before it is written; the
        # write itself has no hook, so the checkpoint is recorded when its contents exist.
        step = int(trainer.global_step)
        with self.run.checkpoint(step):
            pass

    def on_exception(self, trainer, pl_module, exception):
        self.run.error(exception)
        self.run.status("failed")

    def on_train_end(self, trainer, pl_module):
        self.run.status("finished")
