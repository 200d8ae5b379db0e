"""The bench's fresh classifier trains to convergence and is not thrown by near-constant columns.

Each truth here comes from the model that draws the data, never from the classifier.
"""

from __future__ import annotations

import numpy as np

from privbench.bench.evaluators.classifier import CLASSIFIER, FreshClassifier, chosen_input, column_scale

FLIP = 0.1  # label noise: the Bayes accuracy of every task below is 1 - FLIP


def accuracy(clf: FreshClassifier, z: np.ndarray, s: np.ndarray) -> float:
    return float(np.mean(clf.log_proba(z)["s"].argmax(axis=1) == s))


def flipped(s: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    f = rng.random(len(s)) < FLIP
    return np.where(f, 1 - s, s)


def test_a_slowly_learned_boundary_is_learned_to_near_the_bayes_accuracy():
    """S = [sin(3 z_1) > 0] with 10% label noise in 5 dimensions: the MLP improves for well over 40
    epochs. Stopped at 40 (the old rule) it read 0.75; the Bayes accuracy is 0.9."""
    rng = np.random.default_rng(0)

    def draw(n: int) -> tuple[np.ndarray, np.ndarray]:
        z = rng.normal(size=(n, 5))
        return z, flipped((np.sin(3.0 * z[:, 0]) > 0).astype(int), rng)

    z_fit, s_fit = draw(4000)
    z_test, s_test = draw(20000)
    clf = FreshClassifier({"s": 2}, seed=1).fit(z_fit, {"s": s_fit})
    assert accuracy(clf, z_test, s_test) >= (1 - FLIP) - 0.06
    assert clf.epochs_ > 40


def test_near_constant_columns_do_not_blow_up_the_classifier():
    """S = [z_1 > 0] (10% label noise), 19 more standard normal columns, and 5 columns (an image's
    border pixels) that vary by 1e-5 on the fitting rows and by 1e-2 on the rows scored: divided by
    their own deviation they reach 1,000 and swamp z_1."""
    rng = np.random.default_rng(1)

    def draw(n: int, tiny: float) -> tuple[np.ndarray, np.ndarray]:
        z = np.column_stack([rng.normal(size=(n, 20)), tiny * rng.normal(size=(n, 5))])
        return z, flipped((z[:, 0] > 0).astype(int), rng)

    z_fit, s_fit = draw(3000, 1e-5)
    z_test, s_test = draw(20000, 1e-2)
    z_calm, s_calm = draw(20000, 1e-5)  # the same task scored on rows like the fitting rows
    clf = FreshClassifier({"s": 2}, seed=0).fit(z_fit, {"s": s_fit})
    calm = accuracy(clf, z_calm, s_calm)
    assert calm >= (1 - FLIP) - 0.07  # 19 noise columns at n = 3,000 cost a few points
    assert accuracy(clf, z_test, s_test) >= calm - 0.01
    unfloored = FreshClassifier({"s": 2}, seed=0, sd_floor=0.0).fit(z_fit, {"s": s_fit})
    assert accuracy(unfloored, z_test, s_test) < calm - 0.2


def test_column_scale_floors_at_a_fraction_of_the_median_and_leaves_constant_columns_alone():
    sd = np.array([0.0, 1e-7, 1e-5, 0.5, 1.0, 2.0])
    scale = column_scale(sd, CLASSIFIER["sd_floor"])
    # the varying columns are 1e-5, 0.5, 1, 2: median 0.75, floor 0.075
    np.testing.assert_allclose(scale, [1.0, 1.0, 0.075, 0.5, 1.0, 2.0])
    np.testing.assert_allclose(column_scale(np.zeros(3), 0.1), np.ones(3))


def test_a_column_that_does_not_vary_on_the_fitting_rows_is_no_input():
    """S = [z_1 > 0] (10% label noise) and 3 columns constant on the fitting rows: whatever those
    columns hold on the rows scored, the predictions are the same; a release constant in every
    column is classified by the training label frequencies alone (the truth: the draw's own
    frequencies)."""
    rng = np.random.default_rng(2)
    z = np.column_stack([rng.normal(size=(1000, 2)), np.full((1000, 3), 0.5)])
    s = flipped((z[:, 0] > 0).astype(int), rng)
    clf = FreshClassifier({"s": 2}, seed=0, max_epochs=40).fit(z, {"s": s})  # the columns, not convergence
    other = z[:200].copy()
    other[:, 2:] = rng.normal(scale=1e3, size=(200, 3))
    np.testing.assert_array_equal(clf.log_proba(z[:200])["s"], clf.log_proba(other)["s"])
    assert accuracy(clf, z, s) >= (1 - FLIP) - 0.03
    labels = rng.integers(0, 4, size=3000)
    const = FreshClassifier({"s": 4}, seed=0).fit(np.full((3000, 10), 0.25), {"s": labels})
    q = np.exp(const.log_proba(np.full((1, 10), 0.25))["s"][0])
    np.testing.assert_allclose(q, np.bincount(labels, minlength=4) / len(labels), atol=0.02)



def test_groups_keep_every_release_of_an_input_on_one_side_of_the_validation_split():
    rng = np.random.default_rng(0)
    n, k = 200, 4
    x = rng.normal(size=(n * k, 3))
    groups = np.tile(np.arange(n), k)
    clf = FreshClassifier({"y": 2}, 5, max_epochs=2).fit(x, {"y": (x[:, 0] > 0).astype(int)}, groups)
    val = np.zeros(n * k, dtype=bool)
    val[clf.val_rows_] = True
    held = np.unique(groups[val])
    assert held.size == round(0.15 * n)  # the fraction counts inputs, not releases
    assert np.array_equal(np.isin(groups, held), val)  # all k releases of a held-out input, and no other


def quiet_direction_task(rng: np.random.Generator, n: int, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """S = +-0.1 along one direction of noise sd 0.05 (Bayes accuracy Phi(2) = 0.977), eight other
    directions of sd 10 and the rest 0.3, all rotated by ``q`` so that no single column is quiet."""
    d = q.shape[0]
    s = rng.integers(0, 2, size=n)
    a = rng.normal(size=(n, d)) * np.r_[np.full(8, 10.0), np.full(d - 8, 0.3)]
    a[:, -1] = 0.05 * rng.normal(size=n) + 0.1 * (2 * s - 1)
    return a @ q.T, s


def test_the_whitened_input_reads_what_the_standardised_network_misses():
    """Leakage in a quiet direction behind loud ones (as in a ppan-image release near the mean image,
    where the standardised network read 0.788 and the whitened one 0.889): per-column standardisation
    leaves the loud directions loud, and the standardised network stalls far below the Bayes accuracy;
    the whitened input reaches it, and the classifier reads the label from the network that is better on
    the validation rows."""
    rng = np.random.default_rng(0)
    q, _ = np.linalg.qr(rng.normal(size=(64, 64)))
    x, s = quiet_direction_task(rng, 4000, q)
    xt, st = quiet_direction_task(rng, 20000, q)
    bayes = 0.977
    alone = FreshClassifier({"s": 2}, 1, inputs=("standardised",)).fit(x, {"s": s})
    both = FreshClassifier({"s": 2}, 1).fit(x, {"s": s})
    assert accuracy(alone, xt, st) < bayes - 0.1
    assert accuracy(both, xt, st) >= bayes - 0.03
    assert both.input_ == {"s": "whitened"}


def test_a_later_input_is_chosen_only_where_its_validation_loss_is_significantly_lower():
    rng = np.random.default_rng(1)
    base = rng.exponential(size=400)
    noise = 0.5 * rng.normal(size=400)
    assert chosen_input({"standardised": base, "whitened": base - 0.01 + noise}, None) == "standardised"
    assert chosen_input({"standardised": base, "whitened": base - 0.3 + noise}, None) == "whitened"
    assert chosen_input({"standardised": base, "whitened": base + 0.3 + noise}, None) == "standardised"
    # four identical releases per input: significant row by row (t = 2.8), not over the 100 inputs (t = 1.4)
    d = np.repeat(0.07 + 0.5 * rng.standard_normal(100), 4)
    d = d - d.mean() + 0.07
    groups = np.repeat(np.arange(100), 4)
    rows = {"standardised": base, "whitened": base - d}
    t_rows = d.mean() / (d.std(ddof=1) / np.sqrt(400))
    t_groups = d.mean() / (d[::4].std(ddof=1) / np.sqrt(100))
    assert t_rows > 2 > t_groups
    assert chosen_input(rows, None) == "whitened" and chosen_input(rows, groups) == "standardised"


def test_each_label_is_read_from_the_network_chosen_for_it():
    rng = np.random.default_rng(3)
    q, _ = np.linalg.qr(rng.normal(size=(64, 64)))
    x, s = quiet_direction_task(rng, 4000, q)
    loud = (x @ q[:, 0] > 0).astype(int)  # a label in a loud direction
    clf = FreshClassifier({"s": 2, "loud": 2}, 2).fit(x, {"s": s, "loud": loud})
    assert clf.input_["s"] == "whitened"
    import torch

    lp = clf.log_proba(x[:50])
    f = clf._standardised(x[:50])
    for k in ("s", "loud"):  # each label's probabilities come from the network chosen for it
        wm = clf.transforms_[clf.input_[k]]
        net = clf.nets_[clf.input_[k]]
        with torch.no_grad():
            h = net["trunk"](torch.as_tensor(f if wm is None else f @ wm, dtype=torch.float32))
            want = torch.log_softmax(net["heads"][k](h), dim=1).double().numpy()
        np.testing.assert_array_equal(lp[k], want)


def test_adding_the_whitened_network_leaves_the_standardised_one_unchanged():
    """The standardised network trains with the classifier's own seed as before: where it is chosen, the
    numbers are those of a standardised-only classifier, bit for bit."""
    rng = np.random.default_rng(4)
    x = rng.normal(size=(1500, 6))
    y = (x[:, 0] + 0.5 * rng.normal(size=1500) > 0).astype(int)
    alone = FreshClassifier({"y": 2}, 9, inputs=("standardised",)).fit(x, {"y": y})
    both = FreshClassifier({"y": 2}, 9).fit(x, {"y": y})
    assert set(both.nets_) == {"standardised", "whitened"}
    assert alone.epochs_by_input_["standardised"] == both.epochs_by_input_["standardised"]
    assert alone.val_by_input_["standardised"] == both.val_by_input_["standardised"]
