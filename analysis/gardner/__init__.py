"""5x5 Gardner chess: rules (``GardnerBoard``) and the move vocabulary on the 455 edges."""

from analysis.gardner.board import BB_GARDNER, GARDNER_START, MAX_PLIES, GardnerBoard, parse_gardner_fen
from analysis.gardner.variants import opening_lines, variant_board

__all__ = ["BB_GARDNER", "GARDNER_START", "MAX_PLIES", "GardnerBoard", "parse_gardner_fen",
           "opening_lines", "variant_board"]
