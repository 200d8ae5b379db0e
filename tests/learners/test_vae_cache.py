"""The shared VAE (learners.nn.vae_cache): one VAE per training set and settings, the same whether
trained here, kept in memory or loaded from a run's directory, and the learners that use it."""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch

from privbench.datasets.errors import InputError
from privbench.datasets.scenarios import make_scenario
from privbench.learners import make_learner, resolve_learner
from privbench.learners.nn import vae_cache
from privbench.learners.nn.vae import train_autoencoder

CPU = torch.device("cpu")
HP = dict(latent_dim=3, hidden=8, lr=1e-3, batch_size=32, vae_steps=5, gamma=1.0, kappa=0.0, lipschitz=1.0)


@pytest.fixture()
def data():
    sc = make_scenario("digits", {"labeling": "ge5-parity"})
    return sc.task("full", "map", "mse"), sc.sample(200, np.random.default_rng(0)), sc.sample(200, np.random.default_rng(1))


@pytest.fixture(autouse=True)
def empty_memory(monkeypatch):
    monkeypatch.setattr(vae_cache, "MEMORY", vae_cache.OrderedDict())
    monkeypatch.delenv(vae_cache.CACHE_ENV, raising=False)


def same(a, b) -> bool:
    return set(a.tensors) == set(b.tensors) and all(torch.equal(a.tensors[k], b.tensors[k]) for k in a.tensors)


def test_the_shared_vae_is_the_one_trained_from_the_data_seed(data):
    task, s, _ = data
    key = vae_cache.autoencoder_key(s, task, HP, CPU)
    direct = train_autoencoder(s, task, HP, vae_cache.seed_of(key), CPU)
    assert same(vae_cache.shared_autoencoder(s, task, HP, CPU), direct)
    assert same(vae_cache.shared_autoencoder(s, task, HP, CPU), direct)  # from memory


def test_the_key_follows_the_data_and_the_settings_only(data):
    task, s, other = data
    key = vae_cache.autoencoder_key(s, task, HP, CPU)
    assert vae_cache.autoencoder_key(s, task, {**HP, "gamma": 1, "vae_steps": np.int64(5)}, CPU) == key
    assert vae_cache.autoencoder_key(s, task, {**HP, "adv_steps": 7, "eta": 0.5}, CPU) == key  # not the VAE's
    assert vae_cache.autoencoder_key(other, task, HP, CPU) != key
    assert vae_cache.autoencoder_key(s, task, {**HP, "vae_steps": 6}, CPU) != key
    assert vae_cache.autoencoder_key(s, task, {**HP, "lr": 2e-3}, CPU) != key


def test_a_run_directory_hands_the_same_vae_to_another_process(data):
    task, s, _ = data
    key = vae_cache.autoencoder_key(s, task, HP, CPU)
    direct = train_autoencoder(s, task, HP, vae_cache.seed_of(key), CPU)
    with vae_cache.cache_directory() as d:
        assert os.environ[vae_cache.CACHE_ENV] == str(d)
        first = vae_cache.shared_autoencoder(s, task, HP, CPU)
        assert (d / f"{key}.pt").exists()
        vae_cache.MEMORY.clear()  # as a second worker process would start
        loaded = vae_cache.shared_autoencoder(s, task, HP, CPU)
        assert same(first, direct) and same(loaded, direct)
        assert loaded.config == direct.config and loaded.info == direct.info
    assert vae_cache.CACHE_ENV not in os.environ and not d.exists()


def test_the_latent_filter_formulations_share_their_vae_but_not_their_filters(data):
    task, s, _ = data
    params = dict(resolve_learner("latent-filter").test_params)
    a = make_learner("latent-filter", **params).fit(s, task, [1.0], seed=3)[0]
    b = make_learner("latent-filter", beta=0.5, **params).fit(s, task, [1.0], seed=4)[0]
    c = make_learner("latent-filter", share_vae=False, **params).fit(s, task, [1.0], seed=3)[0]
    assert all(torch.equal(a.tensors[k], b.tensors[k]) for k in a.tensors if k != "gamma")
    assert not torch.equal(a.tensors["gamma"], b.tensors["gamma"])
    assert not torch.equal(a.tensors["enc.0.weight"], c.tensors["enc.0.weight"])


def test_private_vae_terms_start_from_one_vae_and_repeat_exactly(data):
    task, s, _ = data
    params = dict(resolve_learner("private-vae").test_params, finetune_steps=0)
    none = make_learner("private-vae", privacy="none", **params).fit(s, task, [0.0], seed=1)[0]
    gap = make_learner("private-vae", privacy="gap", **params).fit(s, task, [5.0], seed=2)[0]
    assert all(torch.equal(none.tensors[k], gap.tensors[k]) for k in none.tensors)  # no fine-tuning: the VAE
    vae_cache.MEMORY.clear()
    w = task.observe(s)
    again = make_learner("private-vae", privacy="gap", **params).fit(s, task, [5.0], seed=2)[0]
    assert np.array_equal(again.release(w, np.random.default_rng(0)), gap.release(w, np.random.default_rng(0)))


@pytest.mark.parametrize("name", ["latent-filter", "private-vae"])
def test_share_vae_must_be_a_bool(name, data):
    task, s, _ = data
    with pytest.raises(InputError, match="share_vae='yes'"):
        make_learner(name, share_vae="yes", **resolve_learner(name).test_params).fit(s, task, [1.0])
