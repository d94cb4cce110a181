# Weights directory; PD_MODEL_PATH overrides the layout's path.
MODEL_PATH=${PD_MODEL_PATH:-{{ m.model_path }}}