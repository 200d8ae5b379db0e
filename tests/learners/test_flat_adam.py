"""FlatAdam gives torch.optim.Adam's parameters bit for bit (the fresh classifier's numbers rest on it)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from privbench.learners.nn.flat_adam import FlatAdam  # noqa: E402


def _problem(d_in: int, hidden: int, heads: tuple[int, ...], seed: int):
    g = torch.Generator().manual_seed(seed)
    layers = [torch.nn.Linear(d_in, hidden)] + [torch.nn.Linear(hidden, k) for k in heads]
    with torch.no_grad():
        for layer in layers:
            for p in layer.parameters():
                p.copy_(torch.randn(p.shape, generator=g) * 0.3)
    x = torch.randn(64, d_in, generator=g)
    ys = [torch.randint(0, k, (64,), generator=g) for k in heads]

    def loss(batch: int):
        idx = torch.arange(batch * 8, batch * 8 + 32) % 64
        h = torch.relu(layers[0](x[idx]))
        return sum(torch.nn.functional.cross_entropy(layer(h), y[idx]) for layer, y in zip(layers[1:], ys))

    return layers, loss


@pytest.mark.parametrize("shared", [False, True])
@pytest.mark.parametrize("d_in,hidden,heads,lr", [(7, 128, (3,), 1e-3), (2, 128, (2, 2), 1e-3),
                                                    (33, 17, (10, 2, 5), 3e-2), (0, 8, (2,), 1e-3)])
def test_flat_adam_matches_torch_adam_bit_for_bit(d_in, hidden, heads, lr, shared):
    ref_layers, ref_loss = _problem(d_in, hidden, heads, seed=d_in + hidden)
    new_layers, new_loss = _problem(d_in, hidden, heads, seed=d_in + hidden)
    ref_params = [p for layer in ref_layers for p in layer.parameters()]
    new_params = [p for layer in new_layers for p in layer.parameters()]
    ref = torch.optim.Adam(ref_params, lr=lr)
    new = FlatAdam(new_params, lr, shared=shared)
    for step in range(60):
        ref.zero_grad()
        ref_loss(step).backward()
        ref.step()
        new.step(new_loss(step))
    moved = False
    for a, b, start in zip(ref_params, new_params, [p for layer in _problem(d_in, hidden, heads, d_in + hidden)[0]
                                                      for p in layer.parameters()]):
        assert a.shape == b.shape
        assert torch.equal(a.detach(), b.detach())
        moved |= bool((a.detach() != start.detach()).any())
    assert moved or d_in == 0


def test_parameters_keep_their_storage_and_a_change_between_steps_is_read():
    ref_layers, ref_loss = _problem(4, 6, (3,), seed=1)
    new_layers, new_loss = _problem(4, 6, (3,), seed=1)
    ref_params = [p for layer in ref_layers for p in layer.parameters()]
    new_params = [p for layer in new_layers for p in layer.parameters()]
    pointers = [p.data_ptr() for p in new_params]
    ref, new = torch.optim.Adam(ref_params, lr=1e-2), FlatAdam(new_params, 1e-2)  # not shared
    for step in range(10):
        if step == 5:  # a projection between steps, as a learner may make
            with torch.no_grad():
                for p in ref_params + new_params:
                    p.clamp_(-0.1, 0.1)
        ref.zero_grad()
        ref_loss(step).backward()
        ref.step()
        new.step(new_loss(step))
    assert [p.data_ptr() for p in new_params] == pointers
    assert all(torch.equal(a.detach(), b.detach()) for a, b in zip(ref_params, new_params))


def test_backward_then_step_with_a_schedule_matches_torch_foreach_adam():
    """The learners' use: ``zero_grad(); loss.backward(); step()`` with ``cosine_lr`` setting the rate."""
    from privbench.learners.nn.core import cosine_lr
    from privbench.learners.nn.flat_adam import adam

    ref_layers, ref_loss = _problem(5, 16, (3, 2), seed=7)
    new_layers, new_loss = _problem(5, 16, (3, 2), seed=7)
    ref_params = [p for layer in ref_layers for p in layer.parameters()]
    new_params = [p for layer in new_layers for p in layer.parameters()]
    ref = torch.optim.Adam(ref_params, lr=0.01, foreach=True)
    new = adam(new_params, 0.01, foreach=True)
    assert isinstance(new, FlatAdam)
    for step in range(40):
        for opt, loss in ((ref, ref_loss), (new, new_loss)):
            cosine_lr(((opt, 0.01),), step, 40)
            opt.zero_grad(set_to_none=True)
            loss(step).backward()
            opt.step()
    assert all(torch.equal(a.detach(), b.detach()) for a, b in zip(ref_params, new_params))
    assert all(p.grad is not None for p in new_params)
    new.zero_grad(set_to_none=True)
    assert all(p.grad is None for p in new_params)
    with pytest.raises(RuntimeError, match="no gradient"):
        new.step()


def test_shared_parameters_are_views_of_one_buffer_and_adam_picks_by_size():
    from privbench.learners.nn.flat_adam import FLAT_MAX, adam

    layers, _ = _problem(4, 6, (3,), seed=1)
    params = [p for layer in layers for p in layer.parameters()]
    before = [p.detach().clone() for p in params]
    opt = FlatAdam(params, 1e-3, shared=True)
    assert all(torch.equal(p.detach(), b) for p, b in zip(params, before))
    with torch.no_grad():
        opt.flat.zero_()
    assert all(float(p.detach().abs().sum()) == 0.0 for p in params)
    big = [torch.nn.Parameter(torch.zeros(FLAT_MAX + 1))]
    assert not isinstance(adam(big, 1e-3), FlatAdam)
    assert isinstance(adam([torch.nn.Parameter(torch.zeros(FLAT_MAX))], 1e-3), FlatAdam)
    assert not isinstance(adam([torch.nn.Parameter(torch.zeros(3, dtype=torch.float64)),
                                torch.nn.Parameter(torch.zeros(3))], 1e-3), FlatAdam)
