"""torchvision.utils.make_grid / save_image -> NumPy + Pillow (MindSpore's own
dependencies: the converted program needs nothing the user did not have).

The rewrite is structural (transpiler/convert/structural/image_grids.py): a
``save_image(...)`` statement becomes the lines that prepare the images and
lay them out the way torchvision does, with NumPy, and write them with Pillow; ``make_grid(...)`` inside an expression gets those lines
before its statement. What the rules see is what that rewrite cannot take.
"""

from __future__ import annotations

from rewrite_rules.api import ApiRule, Example, Unconvertible


def _unplaced(call, ctx):
    raise Unconvertible("needs literal normalize/scale_each arguments, one grid per statement, and save_image as a "
                        "statement of its own: NumPy lays out the grid, Pillow writes it")


RULES = [
    ApiRule(
        "torchvision.utils.save_image",
        None,
        signature="tensor, fp, format=None, **kwargs",
        hook=_unplaced,
        proven_by=("tests/rules/test_image_grids.py::test_grids_and_files_match_torchvision",),
        notes="the images prepared and laid out as torchvision does (RGB, normalize, padding, nrow) with NumPy, "
              "rounded to uint8 as torchvision rounds and written by Pillow",
        examples=(
            Example(
                "import torchvision\ntorchvision.utils.save_image(fake, 'fake.png', nrow=4, normalize=True)",
                "grid_images = np.asarray(fake, dtype=np.float32)\n"
                "grid_images = grid_images.reshape((-1,) + grid_images.shape[-3:])\n"
                "grid_images = grid_images.repeat(3 if grid_images.shape[1] == 1 else 1, axis=1)\n"
                "grid_images = (grid_images - grid_images.min()) / max(\n"
                "    grid_images.max() - grid_images.min(), 1e-5\n)\n"
                "grid_columns = min(4, len(grid_images))\n"
                "grid_padding = 2 if len(grid_images) > 1 else 0\n"
                "grid = np.pad(\n    grid_images,\n    (\n        (0, -len(grid_images) % grid_columns),\n"
                "        (0, 0),\n        (grid_padding, 0),\n        (grid_padding, 0),\n    ),\n"
                "    constant_values=0.0,\n)\n"
                "grid = grid.reshape((-1, grid_columns) + grid.shape[1:]).transpose(0, 3, 1, 4, 2)\n"
                "grid = grid.reshape(\n    grid.shape[0] * grid.shape[1], grid.shape[2] * grid.shape[3], grid.shape[4]\n)\n"
                "grid = np.pad(grid, ((0, grid_padding), (0, grid_padding), (0, 0)), constant_values=0.0)\n"
                "Image.fromarray((grid * 255 + 0.5).clip(0, 255).astype(np.uint8)).save(\"fake.png\")",
            ),
            Example("import torchvision\ntorchvision.utils.save_image(x, 'x.png', normalize=flag)", marked="literal"),
        ),
    ),
    ApiRule(
        "torchvision.utils.make_grid",
        None,
        signature="tensor, nrow=8, padding=2, normalize=False, value_range=None, scale_each=False, pad_value=0.0",
        hook=_unplaced,
        proven_by=("tests/rules/test_image_grids.py::test_grids_and_files_match_torchvision",),
        notes="the same layout with NumPy, returned as a (C, H, W) mindspore.Tensor",
    ),
]
