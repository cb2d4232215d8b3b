"""lc0's ``.pb.gz`` weight format, both ways, in one folder (as lczero-training's ``convert/``).

Reading, from the file inwards:

====================  ========================================================
``proto``             the ``pblczero.Net`` schema (built in Python, no protoc)
``unpacking``         gunzip + protobuf as the file streams in, within a limit
``reader``            header checks, old-format normalisation: ``read_net``
``weights``           exact dequantisation of LINEAR16 / FLOAT16 / BFLOAT16 / FLOAT32
``tensors``           named, shape-checked tensors; batch-norm folding
``import_resnet``     proto -> ``ResNetConfig`` + state dict
``import_attention``  proto -> ``AttentionConfig`` + state dict
``load``              ``from_lc0(net)``, ``load_lc0(path)``: a torch network
``checkpoint``        ``.pb.gz`` -> Sightline checkpoint (``import_net``, ``convert``)
====================  ========================================================

Writing: ``export`` (``export_lc0``; ``exported_net``, once per checkpoint), a Sightline
``lc0-resnet`` network back in lc0's format, so lc0's own search can run it.
"""

from analysis.models.lc0.convert.checkpoint import convert, import_net
from analysis.models.lc0.convert.export import export_lc0, exported_net
from analysis.models.lc0.convert.load import from_lc0, load_lc0
from analysis.models.lc0.convert.reader import read_net

__all__ = ["convert", "export_lc0", "exported_net", "from_lc0", "import_net", "load_lc0", "read_net"]
