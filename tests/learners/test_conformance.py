"""One conformance test for every registered learner (benchopt style).

For each learner and each task kind/observation it declares: fit with its tiny
``test_params``, check types and shapes of what it releases, that the same seed
gives the same mechanism, that a list of budgets gives one mechanism per budget,
and that save/load round-trips.  Bad input is refused with InputError.
"""

from __future__ import annotations

import numpy as np
import pytest

from privbench.datasets import BinaryGMM, GaussianScalar, InputError, Samples, SymmetricPair, Task, task_for
from privbench.learners import Mechanism, available, load_mechanism


def _image_problem(observation: str, privacy: str, n: int = 64):
    rng = np.random.default_rng(3)
    s = rng.integers(0, 2, n)
    u = np.clip(rng.random((n, 16)) * 0.5 + 0.4 * s[:, None], 0, 1)
    task = Task("image", observation, privacy, "xent", n_s=2, d_u=16, image_shape=(4, 4))
    return Samples(s, u), task


def _problem(kind: str, observation: str, privacy: str):
    rng = np.random.default_rng(0)
    if kind == "image":
        return _image_problem(observation, privacy)
    sc = {"finite": SymmetricPair(3, 0.3), "gaussian": GaussianScalar(0.8),
          "mixture": BinaryGMM(0.5, 1.5, 1.0, 1.0)}[kind]
    return sc.sample(256, rng), task_for(sc, observation, privacy)


def _problem_for(cls, kind: str, observation: str, privacy: str):
    """:func:`_problem`, with the funnel's log-loss task for a learner that serves only that distortion."""
    samples, task = _problem(kind, observation, privacy)
    if task.distortion not in cls.distortions and "logloss" in cls.distortions:
        if kind == "image":  # the utility label: 1 for the brighter half of the images
            label = (samples.u.mean(axis=1) > np.median(samples.u.mean(axis=1))).astype(np.int64)
            samples = Samples(samples.s, samples.u, {"bright": label})
            return samples, Task("image", observation, privacy, "logloss", n_s=2, n_u=2, d_u=16, image_shape=(4, 4),
                                 utility=(("bright", 2),))
        task = SymmetricPair(3, 0.3).task(observation, privacy, "logloss")
    return samples, task


def _cases():
    for name, cls in available().items():
        for kind in cls.declared().kinds:
            for obs in cls.observations:
                yield pytest.param(name, kind, obs, id=f"{name}-{kind}-{obs}")


def _fingerprint(mech: Mechanism, w: np.ndarray) -> np.ndarray:
    z = mech.release(w, np.random.default_rng(11))
    ch = mech.channel()
    return np.concatenate([np.ravel(z).astype(float)] + ([ch.ravel()] if ch is not None else []))


@pytest.mark.parametrize("name,kind,observation", list(_cases()))
def test_learner_conformance(name, kind, observation, tmp_path):
    cls = available()[name]
    privacy = cls.privacies[0]
    samples, task = _problem_for(cls, kind, observation, privacy)
    learner = cls(**cls.test_params)
    assert learner.get_params() is not None and repr(learner)
    assert learner.supports(task), f"{name} declares {kind} but refuses its example: {learner.refusal(task)}"
    budgets = [0.1, 0.4] if kind != "image" else [0.6, 0.8]
    mechs = learner.fit(samples, task, budgets, seed=5, device="cpu")
    assert isinstance(mechs, list) and len(mechs) == 2
    w = task.observe(task.check_samples(samples))[:50]
    for mech, b in zip(mechs, budgets):
        assert isinstance(mech, Mechanism) and mech.budget == b and mech.task == task
        z = mech.release(w, np.random.default_rng(1))
        if kind == "finite":
            assert z.dtype == np.int64 and z.shape == (50,)
            assert z.min() >= 0 and z.max() < task.n_z
            ch = mech.channel()
            assert ch.shape == (task.n_w, task.n_z)
            assert np.allclose(ch.sum(axis=1), 1) and ch.min() >= 0
        else:
            assert z.dtype == np.float64 and z.shape == (50, task.d_u)
            assert np.all(np.isfinite(z))
        # save / load round trip releases the same thing
        path = mech.save(tmp_path / f"{name}-{b}.pt")
        again = load_mechanism(path)
        assert type(again) is type(mech)
        np.testing.assert_allclose(_fingerprint(again, w), _fingerprint(mech, w), rtol=1e-6, atol=1e-6)
    # one budget gives one mechanism; the same seed gives the same mechanism
    one = cls(**cls.test_params).fit(samples, task, budgets[0], seed=5, device="cpu")
    assert isinstance(one, Mechanism)
    twice = cls(**cls.test_params).fit(samples, task, budgets[0], seed=5, device="cpu")
    np.testing.assert_array_equal(_fingerprint(one, w), _fingerprint(twice, w))


@pytest.mark.parametrize("name", list(available()))
def test_bad_input_is_refused(name):
    cls = available()[name]
    kind, obs = cls.declared().kinds[0], cls.observations[0]
    samples, task = _problem_for(cls, kind, obs, cls.privacies[0])
    learner = cls(**cls.test_params)
    with pytest.raises(InputError, match="budget"):
        learner.fit(samples, task, -0.1, seed=0, device="cpu")
    with pytest.raises(InputError, match="budget"):
        learner.fit(samples, task, float("nan"), seed=0, device="cpu")
    with pytest.raises(InputError, match="device"):
        learner.fit(samples, task, 0.1, seed=0, device="tpu")
    bad_u = np.array(samples.u, dtype=float)
    bad_u[0] = np.nan
    with pytest.raises(InputError, match="NaN"):
        learner.fit(Samples(samples.s, bad_u), task, 0.1, seed=0, device="cpu")
    with pytest.raises(InputError):
        learner.fit(Samples(samples.s[:5], samples.u[:5].reshape(5, -1)[:, :0]), task, 0.1, seed=0,
                    device="cpu")
    if kind != "gaussian":
        s = np.array(samples.s)
        s[0] = 7
        with pytest.raises(InputError, match="label 7 outside"):
            learner.fit(Samples(s, samples.u), task, 0.1, seed=0, device="cpu")


def test_registry_rejects_unknown_names_and_specs():
    from privbench.learners import make_learner, resolve_learner

    with pytest.raises(InputError, match="learner 'nope' is unknown"):
        resolve_learner("nope")
    with pytest.raises(InputError, match="cannot import module"):
        resolve_learner("no_such_module_xyz:Thing")
    with pytest.raises(InputError, match="no attribute"):
        resolve_learner("privbench.learners.baselines:Nope")
    with pytest.raises(InputError, match="bad hyper-parameters"):
        make_learner("identity", bogus=1)


def test_load_refuses_unsafe_and_foreign_files(tmp_path):
    import pickle

    evil = tmp_path / "evil.pt"
    evil.write_bytes(pickle.dumps({"format": "privbench-mechanism/1", "x": object()}))
    with pytest.raises(InputError, match="not a safe privbench mechanism file"):
        load_mechanism(evil)
    with pytest.raises(InputError, match="does not exist"):
        load_mechanism(tmp_path / "missing.pt")


@pytest.mark.parametrize("name,kind,observation", list(_cases()))
def test_hyper_parameters_resolve_through_one_method(name, kind, observation):
    """Every learner resolves its hyper-parameters with ``resolved(task, n_train)`` (a dict), nothing else."""
    cls = available()[name]
    samples, task = _problem(kind, observation, cls.privacies[0])
    learner = cls(**cls.test_params)
    hp = learner.resolved(task, len(samples))
    assert isinstance(hp, dict) and hp == learner.resolved(task, len(samples))
    assert not hasattr(learner, "config") and not hasattr(learner, "_config")
