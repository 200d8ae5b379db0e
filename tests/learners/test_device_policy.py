"""device="auto": a GPU only for learners whose networks are large enough on the task's kind.

On the H100 of 2026-11-26 (README, "Reproducing the four papers"), 14 processes sharing the GPU trained the small networks of
gap-fig5 about 80 times slower per case than two CPU cores did; image learners ran at about par.  So
``auto`` sends only the declared image learners to cuda; ``cuda`` still puts every learner there.
"""
import pytest
import torch

from privbench.datasets.errors import InputError
from privbench.datasets.scenarios import make_scenario
from privbench.datasets.tasks import task_for
from privbench.learners import make_learner
from privbench.learners.nn import resolve_device
from privbench.learners.registry import available

IMAGE_NETWORKS = {"ppan-image", "ppan-logloss-image", "latent-filter", "private-vae", "vfae-image"}


def test_auto_without_gpu_is_cpu_whatever_the_learner_prefers(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert resolve_device("auto", True).type == "cpu"
    assert resolve_device("auto", False).type == "cpu"
    with pytest.raises(InputError, match="no CUDA GPU"):
        resolve_device("cuda", False)


def test_auto_with_gpu_follows_the_learner_and_cuda_forces(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert resolve_device("auto", True).type == "cuda"
    assert resolve_device("auto", False).type == "cpu"
    assert resolve_device("cuda", False).type == "cuda"
    assert resolve_device("cpu", True).type == "cpu"


def test_only_image_networks_declare_a_gpu():
    declared = {name for name, cls in available().items() if cls.gpu_task_kinds}
    assert declared == IMAGE_NETWORKS
    assert all(available()[n].gpu_task_kinds == ("image",) for n in declared)


def test_preference_depends_on_the_task_kind():
    image = task_for(make_scenario("mnist-subset", {"labeling": "digit"}), "useful", "map", None)
    mixture = task_for(make_scenario("binary-gmm", {"prior": 0.5, "mu": 1.0, "sigma0": 1.0, "sigma1": 1.0}), "full", "map", None)
    filt = make_learner("latent-filter")
    assert filt.prefers_gpu(image) and not filt.prefers_gpu(mixture)
    assert not make_learner("gaussian-noise").prefers_gpu(image)
