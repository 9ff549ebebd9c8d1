"""torchvision.utils.make_grid / save_image without torch, with NumPy and
Pillow only (MindSpore's own dependencies): NumPy does torchvision's
preparation (single-channel images shown as RGB, ``normalize`` /
``value_range`` / ``scale_each``) and lays the images out as torchvision
does (``padding`` pixels of ``pad_value`` between the tiles and around them,
``nrow`` tiles a row); Pillow writes the file with torchvision's rounding
(``grid.mul(255).add_(0.5).clamp_(0, 255)`` to uint8).

    save_image(fake, path, nrow=8,            grid_images = np.asarray(fake, dtype=np.float32)
               normalize=True)                grid_images = grid_images.reshape((-1,) + grid_images.shape[-3:])
                                              grid_images = grid_images.repeat(3 if grid_images.shape[1] == 1 else 1, axis=1)
                                              grid_images = (grid_images - grid_images.min()) / max(
                                                  grid_images.max() - grid_images.min(), 1e-5)
                                              grid_columns = min(8, len(grid_images))
                                              grid_padding = 2 if len(grid_images) > 1 else 0
                                              grid = np.pad(grid_images, ((0, -len(grid_images) % grid_columns),
                                                  (0, 0), (grid_padding, 0), (grid_padding, 0)), constant_values=0.0)
                                              grid = grid.reshape((-1, grid_columns) + grid.shape[1:]).transpose(0, 3, 1, 4, 2)
                                              grid = grid.reshape(rows * height, columns * width, channels)
                                              grid = np.pad(grid, ((0, grid_padding), (0, grid_padding), (0, 0)), ...)
                                              Image.fromarray((grid * 255 + 0.5).clip(0, 255).astype(np.uint8)).save(path)

``make_grid(...)`` inside an expression becomes ``mindspore.Tensor(grid.transpose(2, 0, 1))`` with the
same lines placed before its statement (the images are evaluated once).
"""

from __future__ import annotations

import libcst as cst

from transpiler.convert.engine import code_of, literal_value

MAKE_GRID, SAVE_IMAGE = "torchvision.utils.make_grid", "torchvision.utils.save_image"
_GRID_PARAMS = ("tensor", "nrow", "padding", "normalize", "value_range", "scale_each", "pad_value")
_SAVE_PARAMS = ("tensor", "fp", "nrow", "padding", "normalize", "value_range", "scale_each", "pad_value", "format")
_DEFAULTS = {"nrow": "8", "padding": "2", "normalize": "False", "value_range": "None", "scale_each": "False",
             "pad_value": "0.0", "format": "None"}


class GridProblem(Exception):
    """An argument the rewrite cannot carry (a normalize flag known only at run time ...)."""


def arguments(call: cst.Call, params: tuple[str, ...]) -> dict[str, cst.BaseExpression]:
    values: dict[str, cst.BaseExpression] = {}
    positional = 0
    for arg in call.args:
        if arg.star:
            raise GridProblem("arguments unpacked with * or ** cannot be mapped")
        if arg.keyword is None:
            if positional >= len(params):
                raise GridProblem("too many positional arguments")
            values[params[positional]] = arg.value
            positional += 1
        else:
            if arg.keyword.value == "range":  # torchvision < 0.10 spelling of value_range
                values["value_range"] = arg.value
            elif arg.keyword.value in params:
                values[arg.keyword.value] = arg.value
            else:
                raise GridProblem(f"unknown argument {arg.keyword.value!r}")
    for name in params:
        if name not in values and name in _DEFAULTS:
            values[name] = cst.parse_expression(_DEFAULTS[name])
    if "tensor" not in values:
        raise GridProblem("no images given")
    return values


def _literal(values, name):
    try:
        return literal_value(values[name])
    except (ValueError, SyntaxError):
        raise GridProblem(f"{name} must be a literal (the preparation differs with it)") from None


class GridBuilder:
    """Builds the statements of one make_grid / save_image call."""

    def __init__(self, ctx, images_name: str, grid_name: str):
        self.ctx = ctx
        self.images = images_name
        self.grid = grid_name

    def _n(self, text: str) -> cst.BaseExpression:
        return cst.parse_expression(text.replace("IMAGES", self.images).replace("GRID", self.grid))

    def _assign(self, name: str, value: cst.BaseExpression) -> cst.SimpleStatementLine:
        return cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name))], value)])

    def grid_statements(self, values: dict) -> list[cst.SimpleStatementLine]:
        """The lines that leave the grid (H, W, C float32 NumPy array) in the grid variable."""
        normalize = _literal(values, "normalize")
        scale_each = _literal(values, "scale_each")
        np = code_of(self.ctx.ref("numpy"))
        as_array = cst.Call(self.ctx.ref("numpy.asarray"),
                            [cst.Arg(values["tensor"]), cst.Arg(self.ctx.ref("numpy.float32"), keyword=cst.Name("dtype"),
                                                                equal=cst.AssignEqual(cst.SimpleWhitespace(""),
                                                                                      cst.SimpleWhitespace("")))])
        lines = [
            self._assign(self.images, as_array),
            self._assign(self.images, self._n("IMAGES.reshape((-1,) + IMAGES.shape[-3:])")),
            self._assign(self.images, self._n("IMAGES.repeat(3 if IMAGES.shape[1] == 1 else 1, axis=1)")),
        ]
        if normalize:
            value_range = values["value_range"]
            if not (isinstance(value_range, cst.Name) and value_range.value == "None"):
                low = cst.Subscript(value_range, [cst.SubscriptElement(cst.Index(cst.Integer("0")))])
                high = cst.Subscript(value_range, [cst.SubscriptElement(cst.Index(cst.Integer("1")))])
                clipped = cst.Call(cst.Attribute(cst.Name(self.images), cst.Name("clip")), [cst.Arg(low), cst.Arg(high)])
                span = cst.Call(cst.Name("max"), [cst.Arg(cst.BinaryOperation(high, cst.Subtract(), low)),
                                                 cst.Arg(cst.Float("1e-5"))])
                lines.append(self._assign(self.images, cst.BinaryOperation(
                    cst.BinaryOperation(clipped, cst.Subtract(), low, lpar=[cst.LeftParen()], rpar=[cst.RightParen()]),
                    cst.Divide(), span)))
            elif scale_each:
                lines.append(self._assign(f"{self.images}_low", self._n("IMAGES.min(axis=(1, 2, 3), keepdims=True)")))
                lines.append(self._assign(self.images, self._n(
                    f"(IMAGES - IMAGES_low) / {np}.maximum(IMAGES.max(axis=(1, 2, 3), keepdims=True) - IMAGES_low, 1e-5)"
                    .replace("IMAGES_low", f"{self.images}_low"))))
            else:
                lines.append(self._assign(self.images, self._n(
                    "(IMAGES - IMAGES.min()) / max(IMAGES.max() - IMAGES.min(), 1e-5)")))
        # torchvision's layout: nrow tiles a row, each image after `padding` pixels of pad_value above and to its
        # left, blank tiles to fill the last row, `padding` pixels below and right of the whole; one image alone
        # is returned as it is
        columns, padding = f"{self.grid}_columns", f"{self.grid}_padding"
        lines.append(self._assign(columns, cst.Call(cst.Name("min"), [cst.Arg(values["nrow"]),
                                                                        cst.Arg(self._n("len(IMAGES)"))])))
        lines.append(self._assign(padding, cst.IfExp(test=self._n("len(IMAGES) > 1"), body=values["padding"],
                                                     orelse=cst.Integer("0"))))
        fill = _keyword("constant_values", values["pad_value"])
        lines.append(self._assign(self.grid, cst.Call(self.ctx.ref("numpy.pad"), [
            cst.Arg(cst.Name(self.images)),
            cst.Arg(self._n(f"((0, -len(IMAGES) % {columns}), (0, 0), ({padding}, 0), ({padding}, 0))")),
            fill,
        ])))
        lines.append(self._assign(self.grid, self._n(f"GRID.reshape((-1, {columns}) + GRID.shape[1:]).transpose(0, 3, 1, 4, 2)")))
        lines.append(self._assign(self.grid, self._n(
            "GRID.reshape(GRID.shape[0] * GRID.shape[1], GRID.shape[2] * GRID.shape[3], GRID.shape[4])")))
        lines.append(self._assign(self.grid, cst.Call(self.ctx.ref("numpy.pad"), [
            cst.Arg(cst.Name(self.grid)),
            cst.Arg(self._n(f"((0, {padding}), (0, {padding}), (0, 0))")),
            fill.deep_clone(),
        ])))
        return lines

    def grid_value(self) -> cst.BaseExpression:
        """make_grid's result: a (C, H, W) tensor, as torchvision returns."""
        return cst.Call(self.ctx.ref("mindspore.Tensor"), [cst.Arg(self._n("GRID.transpose(2, 0, 1)"))])

    def save_statement(self, values: dict) -> cst.SimpleStatementLine:
        """torchvision's rounding to uint8, written by Pillow."""
        self.ctx.imports_needed.add(("PIL.Image", "Image"))
        pixels = cst.Call(
            cst.Attribute(self._n("(GRID * 255 + 0.5).clip(0, 255)"), cst.Name("astype")),
            [cst.Arg(self.ctx.ref("numpy.uint8"))],
        )
        image = cst.Call(cst.parse_expression("Image.fromarray"), [cst.Arg(pixels)])
        args = [cst.Arg(values["fp"])]
        if not (isinstance(values["format"], cst.Name) and values["format"].value == "None"):
            args.append(_keyword("format", values["format"]))
        return cst.SimpleStatementLine([cst.Expr(cst.Call(cst.Attribute(image, cst.Name("save")), args))])


def _keyword(name: str, value: cst.BaseExpression) -> cst.Arg:
    return cst.Arg(value, keyword=cst.Name(name),
                   equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
