"""Training configs: TOML parsing, LR steps and the time-budgeted schedule."""

from pathlib import Path

import pytest

from analysis.train.config import TrainConfig, load_config

ROOT = Path(__file__).resolve().parent.parent


def _load_any(path: Path):
    """Each config by the command that reads it: Giraffe's TD-Leaf runs (``giraffe-train``) and
    AlphaGateau self-play (``selfplay``) by their own loaders, every other one by ``train``."""
    if path.name.startswith("giraffe"):
        from analysis.train.giraffe.config import load_config as load_giraffe

        return load_giraffe(path)
    if path.name.startswith("selfplay"):
        from analysis.train.selfplay_config import load_selfplay_config

        return load_selfplay_config(path)
    return load_config(path)


def test_shipped_configs_parse():
    paths = sorted((ROOT / "configs").glob("*.toml"))
    kinds = {type(_load_any(path)).__name__ for path in paths}
    assert {"TrainConfig", "GiraffeRunConfig", "SelfPlayConfig"} <= kinds
    for path in paths:
        cfg = _load_any(path)
        if not isinstance(cfg, TrainConfig):
            continue
        assert cfg.steps > 0
        if cfg.family == "chessformer":  # Nadam as Chessformer section III, the paper's loss weights
            assert cfg.loss.soft_policy == 8.0 and cfg.betas == (0.9, 0.98) and cfg.eps == 1e-7
        elif cfg.family == "chessbench":  # Adam, clip 1.0, an EMA, HL-Gauss (Ruoss et al.)
            # The paper's EMA decay is 0.99; short runs at a higher rate (cb-2m, cb-cpu) average longer.
            assert cfg.optimizer == "adam" and cfg.grad_clip == 1.0 and 0.99 <= cfg.ema_decay <= 0.999
            assert cfg.loss.value_target == "hl_gauss"


def test_lr_steps_by_step_and_warmup():
    cfg = TrainConfig(data=Path("d"), out=Path("o"), steps=100, lr_steps=[[0, 1e-3], [50, 1e-4]], warmup_steps=10)
    assert cfg.lr_at(0) == pytest.approx(1e-4)  # warmup: 1/10 of the first rate
    assert cfg.lr_at(20) == pytest.approx(1e-3)
    assert cfg.lr_at(50) == pytest.approx(1e-4)


def test_progress_schedule_follows_the_wall_clock():
    cfg = TrainConfig(data=Path("d"), out=Path("o"), steps=1000, max_wall_minutes=10, schedule="progress",
                      lr_steps=[[0, 1e-3], [0.5, 1e-4]], swa_start=0.8)
    cfg.validate()
    assert cfg.lr_at(10, elapsed_s=60) == pytest.approx(1e-3)
    assert cfg.lr_at(10, elapsed_s=301) == pytest.approx(1e-4)  # half the time used, few steps done
    assert cfg.lr_at(600, elapsed_s=0) == pytest.approx(1e-4)  # or half the steps done
    assert not cfg.swa_active(10, 400) and cfg.swa_active(10, 481)


def test_bad_configs_are_rejected(tmp_path):
    bad = tmp_path / "c.toml"
    bad.write_text('data = "d"\nout = "o"\nschedule = "progress"\nlr_steps = [[0, 1e-3], [500, 1e-4]]\n')
    with pytest.raises(ValueError, match="fractions"):
        load_config(bad)
    bad.write_text('data = "d"\n')
    with pytest.raises(ValueError, match="out"):
        load_config(bad)
    bad.write_text('data = "d"\nout = "o"\n[loss]\npolicyy = 1\n')
    with pytest.raises(ValueError, match="loss"):
        load_config(bad)
    with pytest.raises(ValueError, match="not found"):
        load_config(tmp_path / "missing.toml")
