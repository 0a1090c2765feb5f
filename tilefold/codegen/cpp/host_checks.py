"""``host_checks.hpp``: the helpers a generated ``main.cpp`` includes for file I/O and output checks.

Reads: nothing. Writes: the header's C++ text (written next to ``main.cpp``).

- ``read_bytes`` / ``write_bytes``: the ``data/*.bin`` files next to ``main.cpp``.
- ``decode_values``: device bytes → one ``double`` per element, in device order. bfloat16 and
  float32 are bit patterns; bfp8_b / bfp4_b are unpacked tile by tile the way the unpacker
  does it (exponent section of one shared exponent per 16 values, then sign-magnitude
  mantissas; the leading one is normalised and values below the float32 range flush to
  zero); integer formats are their integer values.
- ``print_checksum``: an output's size and FNV-1a 64-bit checksum, for a program whose outputs
  have no expected values.
- ``compare_output``: max abs error, Pearson correlation (PCC) and the count of values outside
  ``atol + rtol * |golden|``; prints one line and returns whether the output passes.

The helpers use nothing of TT-Metalium but ``tt::DataFormat`` (declared before the header is
included), so tests compile and run them alone.
"""

HOST_CHECKS_HEADER = "host_checks.hpp"

_INCLUDES = ("algorithm", "cmath", "cstdint", "cstdio", "cstdlib", "cstring", "fstream", "string", "utility",
             "vector")

_HELPERS = r"""
// Reads a file of `size` bytes; a missing or short file ends the program.
std::vector<uint8_t> read_bytes(const std::string& path, size_t size) {
    std::ifstream file(path, std::ios::binary);
    std::vector<uint8_t> bytes(size);
    if (!file || !file.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size))) {
        std::fprintf(stderr, "cannot read %zu bytes from %s\n", size, path.c_str());
        std::exit(2);
    }
    return bytes;
}

void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
    std::ofstream file(path, std::ios::binary);
    file.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

template <typename T>
T load_value(const std::vector<uint8_t>& bytes, size_t offset) {
    T value;
    std::memcpy(&value, bytes.data() + offset, sizeof(T));
    return value;
}

float float_from_bits(uint32_t bits) {
    float value;
    std::memcpy(&value, &bits, sizeof(value));
    return value;
}

// One block-float value: `magnitude` has `bits` bits, the shared exponent is a float32 exponent field.
double block_float_value(uint32_t sign, uint32_t magnitude, uint32_t shared_exponent, int bits) {
    if (magnitude == 0) {
        return 0.0;
    }
    int shift = 0;  // moves the leading one to the top magnitude bit
    while ((magnitude << shift) < (1u << (bits - 1))) {
        ++shift;
    }
    if (static_cast<uint32_t>(shift) > shared_exponent) {
        return 0.0;
    }
    const uint32_t fraction = (magnitude << (shift + 1)) & ((1u << bits) - 1);
    const uint32_t float_bits = (sign << 31) | ((shared_exponent - shift) << 23) | (fraction << (23 - bits));
    return float_from_bits(float_bits);
}

// Device bytes as values, in device order. `tile_elements` is H * W of one tile (block floats).
std::vector<double> decode_values(const std::vector<uint8_t>& bytes, tt::DataFormat format, size_t tile_elements) {
    std::vector<double> values;
    switch (format) {
        case tt::DataFormat::Float32:
            for (size_t i = 0; i + 4 <= bytes.size(); i += 4) {
                values.push_back(float_from_bits(load_value<uint32_t>(bytes, i)));
            }
            break;
        case tt::DataFormat::Float16_b:
            for (size_t i = 0; i + 2 <= bytes.size(); i += 2) {
                values.push_back(float_from_bits(static_cast<uint32_t>(load_value<uint16_t>(bytes, i)) << 16));
            }
            break;
        case tt::DataFormat::Bfp8_b:
        case tt::DataFormat::Bfp4_b: {
            const int bits = format == tt::DataFormat::Bfp8_b ? 7 : 3;  // magnitude bits after the sign
            const size_t exponent_bytes = tile_elements / 16;
            const size_t tile_bytes = exponent_bytes + tile_elements * (bits + 1) / 8;
            for (size_t tile = 0; tile + tile_bytes <= bytes.size(); tile += tile_bytes) {
                const uint8_t* exponents = bytes.data() + tile;
                const uint8_t* mantissas = exponents + exponent_bytes;
                for (size_t i = 0; i < tile_elements; ++i) {
                    const uint32_t code = bits == 7 ? mantissas[i] : (mantissas[i / 2] >> (4 * (i % 2))) & 0xF;
                    const uint32_t magnitude = code & ((1u << bits) - 1);
                    values.push_back(block_float_value(code >> bits, magnitude, exponents[i / 16], bits));
                }
            }
            break;
        }
        case tt::DataFormat::UInt32:
            for (size_t i = 0; i + 4 <= bytes.size(); i += 4) {
                values.push_back(load_value<uint32_t>(bytes, i));
            }
            break;
        case tt::DataFormat::Int32:
            for (size_t i = 0; i + 4 <= bytes.size(); i += 4) {
                values.push_back(load_value<int32_t>(bytes, i));
            }
            break;
        case tt::DataFormat::UInt16:
            for (size_t i = 0; i + 2 <= bytes.size(); i += 2) {
                values.push_back(load_value<uint16_t>(bytes, i));
            }
            break;
        case tt::DataFormat::UInt8:
            for (uint8_t byte : bytes) {
                values.push_back(byte);
            }
            break;
        default:
            std::fprintf(stderr, "no decoder for data format %d\n", static_cast<int>(format));
            std::exit(2);
    }
    return values;
}

// Prints an output's size and the FNV-1a 64-bit checksum of its bytes (outputs without expected values).
void print_checksum(const char* name, const std::vector<uint8_t>& output, const char* path) {
    uint64_t hash = 14695981039346656037ull;
    for (uint8_t byte : output) {
        hash = (hash ^ byte) * 1099511628211ull;
    }
    std::printf("%s: %zu bytes written to %s, FNV-1a checksum %016llx (not checked)\n", name, output.size(), path,
                static_cast<unsigned long long>(hash));
}

// Compares an output with its golden bytes; prints one line and returns whether it passes.
bool compare_output(const char* name, const std::vector<uint8_t>& output, const std::vector<uint8_t>& golden,
                    tt::DataFormat format, size_t tile_elements, double rtol, double atol, double min_pcc) {
    const std::vector<double> got = decode_values(output, format, tile_elements);
    const std::vector<double> want = decode_values(golden, format, tile_elements);
    size_t outside = got.size() == want.size() ? 0 : std::max(got.size(), want.size());
    double max_abs_error = 0.0;
    std::vector<std::pair<double, double>> finite;
    for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
        const double g = got[i];
        const double w = want[i];
        if (std::isnan(g) || std::isnan(w) || std::isinf(g) || std::isinf(w)) {
            const bool same = (std::isnan(g) && std::isnan(w)) || g == w;
            outside += same ? 0 : 1;
            continue;
        }
        const double error = std::fabs(g - w);
        max_abs_error = std::max(max_abs_error, error);
        outside += error > atol + rtol * std::fabs(w) ? 1 : 0;
        finite.emplace_back(g, w);
    }
    double mean_g = 0.0, mean_w = 0.0;
    for (const auto& [g, w] : finite) {
        mean_g += g;
        mean_w += w;
    }
    const double n = finite.empty() ? 1.0 : static_cast<double>(finite.size());
    mean_g /= n;
    mean_w /= n;
    double covariance = 0.0, variance_g = 0.0, variance_w = 0.0;
    for (const auto& [g, w] : finite) {
        covariance += (g - mean_g) * (w - mean_w);
        variance_g += (g - mean_g) * (g - mean_g);
        variance_w += (w - mean_w) * (w - mean_w);
    }
    double pcc;
    if (variance_g > 0.0 && variance_w > 0.0) {
        pcc = covariance / std::sqrt(variance_g * variance_w);
    } else {
        pcc = (variance_g == variance_w && outside == 0) ? 1.0 : 0.0;  // constant data: equal or not
    }
    const bool pass = outside == 0 && pcc >= min_pcc;
    std::printf("%s: %zu values, max abs error %.6g, PCC %.6f, %zu outside tolerance (rtol %g, atol %g, "
                "min PCC %g): %s\n",
                name, want.size(), max_abs_error, pcc, outside, rtol, atol, min_pcc, pass ? "PASS" : "FAIL");
    return pass;
}
""".strip("\n")


def emit_host_checks() -> str:
    """The text of ``host_checks.hpp``."""
    lines = [
        "// host_checks.hpp: file I/O and output checks for a host program generated by tilefold.",
        "// Needs tt::DataFormat declared first (main.cpp includes TT-Metalium before this header).",
        "#pragma once",
        "",
        *[f"#include <{h}>" for h in _INCLUDES],
        "",
        "namespace host_checks {",
        "",
        _HELPERS,
        "",
        "}  // namespace host_checks",
        "",
        "using host_checks::compare_output;",
        "using host_checks::print_checksum;",
        "using host_checks::read_bytes;",
        "using host_checks::write_bytes;",
    ]
    return "\n".join(lines) + "\n"
