"""Mechanism types shared by several learners.

``finite-channel``   a row-stochastic matrix P(Z=z | W=w) (finite tasks).
``linear-gaussian``  Z = A U + B S + N(0, noise_cov) (gaussian tasks).
``constant``         Z = c (continuous-U tasks).
``image-constant-or-identity``  images: Z = U, or a constant image.
``additive-noise``   Z = clip(U + sigma N(0, I), lo, hi) (mixture tasks with vector U, images).
``mixture-shift``    GAP §4's Z = U + (1-S) beta0 - S beta1 + ((1-S) gamma0 + S gamma1) N
                     (mixture tasks; with observation ``useful`` beta1 = -beta0 and
                     gamma1 = gamma0, i.e. Z = U + beta0 + gamma0 N).
"""

from .additive_noise import AdditiveNoise
from .constant import ConstantGaussian
from .finite_channel import FiniteChannel
from .image_constant import ConstantOrIdentityImage
from .linear_gaussian import LinearGaussian
from .mixture_shift import MIXTURE_PARAMS, MixtureShift

__all__ = ["AdditiveNoise", "ConstantGaussian", "ConstantOrIdentityImage", "FiniteChannel", "LinearGaussian",
           "MIXTURE_PARAMS", "MixtureShift"]
