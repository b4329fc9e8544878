"""Models of scripts/dummy3, listed by code (madengine's dynamic registry)."""
from madengine.utils.discover_models import CustomModel

Model3 = CustomModel(name="model3", dockerfile="docker/dummy", scripts="run.sh", n_gpus="1",
                     owner="ci", tags=["dummies", "dummy_test_group_3"])


class Model4(CustomModel):
    def update_model(self):
        self.dockerfile = "docker/dummy"
        self.scripts = "run.sh"
        self.n_gpus = "1"
        self.owner = "ci"


def list_models():
    return [Model3, Model4(name="model4", tags=["dummies", "dummy_test_group_3"])]
