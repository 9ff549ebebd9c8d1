"""Small torch models of different families, converted and verified by
tests/proof/test_verify_models.py. Each file's VERIFY maps a model class to the
``--input`` specs of its forward()."""
