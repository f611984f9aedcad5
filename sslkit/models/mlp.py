"""Multi-layer perceptron for tabular data (paper A, Appendix C "Model architectures", MLP)."""

from __future__ import annotations

import numbers

from torch import nn

from sslkit.models.utils import check_fraction, check_input, check_positive_int

# Paper A, App. C: "two hidden layers ... [256, 256] for Adult, Banknote, Breast Cancer and Credit Default;
# [512, 512] for Covertype; [512, 256] for Shuttle and Dry Beans." ReLU, dropout 0.2.
PAPER_A_MLP_HIDDEN: dict[str, tuple[int, ...]] = {
    "adult": (256, 256),
    "banknote": (256, 256),
    "breast_cancer": (256, 256),
    "credit_default": (256, 256),
    "covertype": (512, 512),
    "shuttle": (512, 256),
    "dry_bean": (512, 256),
}


class MLP(nn.Module):
    """``Linear -> ReLU -> Dropout`` for each hidden width, then ``Linear`` to ``num_classes`` logits.

    Paper A, App. C: two hidden layers, ReLU, dropout 0.2; widths per dataset in
    :data:`PAPER_A_MLP_HIDDEN`. ``hidden=()`` gives multinomial logistic regression.

    ``forward(x)`` takes a float tensor of shape ``(N, in_features)`` and returns ``(logits, features)``:
    ``features`` is the input of the final linear layer (the last hidden activations, after dropout; in
    eval mode dropout is the identity), so ``logits == model.classifier(features)`` always.
    ``feature_dim`` is the last hidden width (``in_features`` when ``hidden=()``).
    """

    def __init__(self, in_features, num_classes, hidden=(256, 256), dropout=0.2):
        super().__init__()
        self.in_features = check_positive_int(in_features, "in_features")
        self.num_classes = check_positive_int(num_classes, "num_classes")
        if isinstance(hidden, numbers.Integral):
            raise TypeError(f"hidden must be a sequence of layer widths such as (256, 256), got {hidden!r}")
        self.hidden = tuple(check_positive_int(h, "hidden width") for h in hidden)
        self.dropout = check_fraction(dropout, "dropout")
        layers = []
        width = self.in_features
        for h in self.hidden:
            layers += [nn.Linear(width, h), nn.ReLU(), nn.Dropout(self.dropout)]
            width = h
        self.body = nn.Sequential(*layers)
        self.feature_dim = width
        self.classifier = nn.Linear(width, self.num_classes)

    def forward(self, x):
        check_input(x, (None, self.in_features), "MLP")
        features = self.body(x)
        return self.classifier(features), features

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, num_classes={self.num_classes}, hidden={self.hidden}"
