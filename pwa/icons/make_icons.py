"""Draw Credence's app icons (a stack of cards with a check) as PNGs, with no imaging library."""

from __future__ import annotations

import itertools
import math
import struct
import zlib
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
TOP = (0x63, 0x66, 0xF1)  # indigo, lighter at the top
BOTTOM = (0x43, 0x38, 0xCA)
CHECK = (0x12, 0x9E, 0x6E)
WHITE = (0xFF, 0xFF, 0xFF)

Shape = Callable[[float, float], float]  # signed distance in pixels (negative = inside)


def rounded_rect(cx: float, cy: float, w: float, h: float, r: float, angle: float = 0.0) -> Shape:
    """Signed distance to a rounded rectangle centred at (cx, cy), rotated by ``angle`` degrees."""
    cos_a, sin_a = math.cos(math.radians(-angle)), math.sin(math.radians(-angle))

    def distance(x: float, y: float) -> float:
        dx, dy = x - cx, y - cy
        rx, ry = dx * cos_a - dy * sin_a, dx * sin_a + dy * cos_a
        qx, qy = abs(rx) - w / 2 + r, abs(ry) - h / 2 + r
        outside = math.hypot(max(qx, 0.0), max(qy, 0.0))
        return outside + min(max(qx, qy), 0.0) - r

    return distance


def polyline(points: list[tuple[float, float]], width: float) -> Shape:
    """Signed distance to a stroked polyline with round caps and joins."""

    def distance(x: float, y: float) -> float:
        best = math.inf
        for (ax, ay), (bx, by) in itertools.pairwise(points):
            vx, vy = bx - ax, by - ay
            t = max(0.0, min(1.0, ((x - ax) * vx + (y - ay) * vy) / (vx * vx + vy * vy)))
            best = min(best, math.hypot(x - ax - t * vx, y - ay - t * vy))
        return best - width / 2

    return distance


def coverage(d: float) -> float:
    """Anti-aliased coverage of a pixel whose centre is ``d`` pixels from an edge."""
    return max(0.0, min(1.0, 0.5 - d))


def blend(under: tuple[float, ...], colour: tuple[int, int, int], alpha: float) -> tuple:
    """Composite ``colour`` at ``alpha`` over the premultiplied-free RGBA pixel ``under``."""
    r, g, b, a = under
    out_a = alpha + a * (1 - alpha)
    if out_a == 0:
        return (0.0, 0.0, 0.0, 0.0)
    under_rgb = (r, g, b)
    mix = [
        (c * alpha + u * a * (1 - alpha)) / out_a for c, u in zip(colour, under_rgb, strict=True)
    ]
    return (*mix, out_a)


def draw(size: int, *, maskable: bool) -> bytes:
    """Render one icon as 8-bit RGBA rows."""
    s = size / 512
    # Maskable icons are cropped to a circle of 80% diameter: keep the motif inside it.
    k = s * (0.78 if maskable else 1.0)
    c = size / 2
    background = (lambda x, y: -1.0) if maskable else rounded_rect(c, c, size, size, size * 0.22)
    back_card = rounded_rect(c - 18 * k, c + 6 * k, 250 * k, 300 * k, 34 * k, angle=-11)
    front_card = rounded_rect(c + 10 * k, c - 2 * k, 250 * k, 300 * k, 34 * k, angle=5)
    check = polyline(
        [(c - 52 * k, c + 2 * k), (c - 6 * k, c + 48 * k), (c + 74 * k, c - 50 * k)], 40 * k
    )
    rows = bytearray()
    for py in range(size):
        rows.append(0)  # PNG filter type: none
        t = py / (size - 1)
        bg = tuple(round(a + (b - a) * t) for a, b in zip(TOP, BOTTOM, strict=True))
        for px in range(size):
            x, y = px + 0.5, py + 0.5
            pixel: tuple = (0.0, 0.0, 0.0, 0.0)
            pixel = blend(pixel, bg, coverage(background(x, y)))
            if pixel[3] > 0:
                pixel = blend(pixel, WHITE, 0.38 * coverage(back_card(x, y)))
                pixel = blend(pixel, WHITE, coverage(front_card(x, y)))
                pixel = blend(pixel, CHECK, coverage(check(x, y)))
            rows.extend(round(v) for v in pixel[:3])
            rows.append(round(pixel[3] * 255))
    return bytes(rows)


def png(size: int, rgba_rows: bytes) -> bytes:
    """Encode RGBA rows (each prefixed with its filter byte) as a PNG file."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rgba_rows, 9))
        + chunk(b"IEND", b"")
    )


def main() -> None:
    """Write icon-192.png, icon-512.png, maskable-512.png and apple-touch-icon.png here."""
    outputs = {
        "icon-192.png": (192, False),
        "icon-512.png": (512, False),
        "maskable-512.png": (512, True),
        "apple-touch-icon.png": (180, True),  # iOS rounds the corners itself
    }
    for name, (size, maskable) in outputs.items():
        (HERE / name).write_bytes(png(size, draw(size, maskable=maskable)))
        print(f"wrote {HERE / name}")


if __name__ == "__main__":
    main()
