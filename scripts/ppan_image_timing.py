"""CPU time of one ppan-image fit (2 epochs, 4 budgets, the MNIST subset's 4,000 training images): the paper
suite's former entry on the default schedule against schedule sharp (its entry now), without and with the
discriminator.

    python scripts/ppan_image_timing.py ['{"adv_steps": 2}']   # optional JSON overrides for sharp
"""
import time, sys, json
import numpy as np
from privbench.datasets.labelled import image_partition
from privbench.learners import make_learner
from privbench.datasets import Samples, Task
train, _, _, _ = image_partition("mnist-subset", "digit")
samples = Samples(train.s, train.flat)
task = Task("image", "useful", "mi", "xent", n_s=10, d_u=784, image_shape=(28, 28))
old = dict(hidden=(128, 128), adv_hidden=(128, 128), epochs=2, batch_size=50, lr=0.002, schedule="default",
           disc_hidden=(128,))  # the paper suite's former ppan-images entry, on the default schedule
extra = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
new = dict(schedule="sharp", epochs=2, **extra)
budgets = [0.18, 0.2, 0.22, 0.24]
for rep in range(2):
    for name, kw in (("old-equivalent", old), ("sharp", new), ("old-equivalent gamma=2", dict(old, gamma=2.0)),
                     ("sharp gamma=2", dict(new, gamma=2.0))):
        t = time.process_time()
        make_learner("ppan-image", **kw).fit(samples, task, budgets, seed=0, device="cpu")
        print(rep, name, f"{time.process_time() - t:.2f} cpu-s for 2 epochs, 4 budgets", flush=True)
