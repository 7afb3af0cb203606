//! Fitting an image a kernel displayed into the answer's budget (1568 px a
//! side, 1 MiB): downscaled here, in the host, for both kernels, so neither
//! driver needs an image library.
//!
//! Decoding is bounded: the header is read first, and an image whose declared
//! size is over [`DECODE_MAX_SIDE`] or whose pixels would take more than
//! [`DECODE_MAX_ALLOC`] is never decoded (a small file can declare a huge
//! image). The same limits are handed to the decoder, which checks them
//! against what it allocates. This module must never decode an image that
//! already fits: that one goes out byte for byte as the kernel sent it.

use image::codecs::jpeg::JpegEncoder;
use image::codecs::png::{CompressionType, FilterType as PngFilter, PngEncoder};
use image::imageops::FilterType;
use image::{DynamicImage, ImageFormat, ImageReader, Limits};
use std::io::Cursor;

/// The longest side an image in an answer may have, in pixels.
pub const IMAGE_MAX_SIDE: u32 = 1568;
/// The most bytes an image in an answer may have.
pub const IMAGE_MAX_BYTES: usize = 1 << 20;
/// The longest side of an image this host decodes to downscale it.
pub const DECODE_MAX_SIDE: u32 = 16_384;
/// The most memory decoding one image may take (a 64-megapixel RGBA image).
pub const DECODE_MAX_ALLOC: u64 = 256 << 20;

/// How many times an image is re-encoded, smaller each time, to get under
/// the byte budget before giving up.
const ENCODE_TRIES: usize = 5;
/// The quality a downscaled JPEG is written at.
const JPEG_QUALITY: u8 = 85;

/// What became of an image.
#[derive(Debug, PartialEq, Eq)]
pub enum Fit {
    /// Within the budget as it is. Its size in pixels, when its header could
    /// be read (a format this host does not decode has none).
    AsIs { size: Option<(u32, u32)> },
    /// Downscaled to fit.
    Downscaled {
        mime: &'static str,
        data: Vec<u8>,
        size: (u32, u32),
        from: (u32, u32),
    },
    /// Over the budget and not downscaled: `why`, in words that follow
    /// "could not be downscaled". The size is known when the header was read.
    Refused {
        size: Option<(u32, u32)>,
        why: String,
    },
}

/// The limits a decoder runs under.
fn decode_limits() -> Limits {
    let mut limits = Limits::default();
    limits.max_image_width = Some(DECODE_MAX_SIDE);
    limits.max_image_height = Some(DECODE_MAX_SIDE);
    limits.max_alloc = Some(DECODE_MAX_ALLOC);
    limits
}

/// A reader of `data` if it is a PNG or JPEG, under `limits` (the header of
/// an image over the decoding limits is read without them, to say its size).
fn reader(data: &[u8], limits: Limits) -> Option<(ImageReader<Cursor<&[u8]>>, ImageFormat)> {
    let mut r = ImageReader::new(Cursor::new(data))
        .with_guessed_format()
        .ok()?;
    let format = r.format()?;
    if !matches!(format, ImageFormat::Png | ImageFormat::Jpeg) {
        return None;
    }
    r.limits(limits);
    Some((r, format))
}

/// Fit `data` (a PNG or JPEG; anything else can only pass as it is) into the
/// budget.
pub fn fit(data: &[u8]) -> Fit {
    let within_bytes = data.len() <= IMAGE_MAX_BYTES;
    let Some((header, format)) = reader(data, Limits::no_limits()) else {
        return if within_bytes {
            Fit::AsIs { size: None }
        } else {
            Fit::Refused {
                size: None,
                why: "it is not a PNG or JPEG".into(),
            }
        };
    };
    let (w, h) = match header.into_dimensions() {
        Ok(size) => size,
        Err(e) => {
            return if within_bytes {
                Fit::AsIs { size: None }
            } else {
                Fit::Refused {
                    size: None,
                    why: format!("its header does not read: {e}"),
                }
            }
        }
    };
    if within_bytes && w.max(h) <= IMAGE_MAX_SIDE {
        return Fit::AsIs { size: Some((w, h)) };
    }
    let refused = |why: String| Fit::Refused {
        size: Some((w, h)),
        why,
    };
    // Before the decoder allocates anything: 4 bytes a pixel at most (the
    // decoder's own limit counts 16-bit images in full).
    if w.max(h) > DECODE_MAX_SIDE || u64::from(w) * u64::from(h) * 4 > DECODE_MAX_ALLOC {
        return refused(decode_limit_words());
    }
    let Some((decoder, _)) = reader(data, decode_limits()) else {
        return refused("it is not a PNG or JPEG".into());
    };
    let image = match decoder.decode() {
        Ok(image) => image,
        Err(image::ImageError::Limits(_)) => return refused(decode_limit_words()),
        Err(e) => return refused(format!("it does not decode: {e}")),
    };
    match shrink(&image, format, data.len()) {
        Ok((data, size)) => Fit::Downscaled {
            mime: if format == ImageFormat::Jpeg {
                "image/jpeg"
            } else {
                "image/png"
            },
            data,
            size,
            from: (w, h),
        },
        Err(why) => refused(why),
    }
}

fn decode_limit_words() -> String {
    format!(
        "it is over what this host decodes: {} px a side and {} MiB of pixels",
        tool_core::format::thousands(DECODE_MAX_SIDE as usize),
        DECODE_MAX_ALLOC >> 20
    )
}

/// `image` resized to fit the side budget and encoded as `format`, smaller
/// each try until it fits the byte budget.
fn shrink(
    image: &DynamicImage,
    format: ImageFormat,
    original_bytes: usize,
) -> Result<(Vec<u8>, (u32, u32)), String> {
    let (w, h) = (image.width(), image.height());
    let mut scale = (f64::from(IMAGE_MAX_SIDE) / f64::from(w.max(h))).min(1.0);
    let mut last = original_bytes;
    for _ in 0..ENCODE_TRIES {
        let size = scaled(w, h, scale);
        let small = if size == (w, h) {
            image.clone()
        } else {
            image.resize_exact(size.0, size.1, FilterType::Triangle)
        };
        let bytes = encode(&small, format).map_err(|e| format!("it does not encode: {e}"))?;
        if bytes.len() <= IMAGE_MAX_BYTES {
            return Ok((bytes, size));
        }
        // Bytes grow with the area: aim a little under the budget.
        last = bytes.len();
        scale *= 0.9 * (IMAGE_MAX_BYTES as f64 / last as f64).sqrt();
    }
    Err(format!(
        "it is still {} bytes after {ENCODE_TRIES} tries",
        tool_core::format::thousands(last)
    ))
}

/// `w`×`h` times `scale`, each side at least 1 px and at most as it was.
fn scaled(w: u32, h: u32, scale: f64) -> (u32, u32) {
    let side = |s: u32| ((f64::from(s) * scale).round() as u32).clamp(1, s);
    (side(w), side(h))
}

fn encode(image: &DynamicImage, format: ImageFormat) -> image::ImageResult<Vec<u8>> {
    let mut out = Vec::new();
    if format == ImageFormat::Jpeg {
        // JPEG has no alpha and no 16-bit samples.
        let image = match image {
            DynamicImage::ImageLuma8(_) | DynamicImage::ImageRgb8(_) => image.clone(),
            DynamicImage::ImageLuma16(_) | DynamicImage::ImageLumaA8(_) => {
                DynamicImage::ImageLuma8(image.to_luma8())
            }
            _ => DynamicImage::ImageRgb8(image.to_rgb8()),
        };
        image.write_with_encoder(JpegEncoder::new_with_quality(&mut out, JPEG_QUALITY))?;
    } else {
        image.write_with_encoder(PngEncoder::new_with_quality(
            &mut out,
            CompressionType::Default,
            PngFilter::Adaptive,
        ))?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::{GrayImage, RgbImage};

    fn png(image: DynamicImage) -> Vec<u8> {
        encode(&image, ImageFormat::Png).unwrap()
    }

    fn size_of(data: &[u8]) -> (u32, u32) {
        reader(data, Limits::no_limits())
            .unwrap()
            .0
            .into_dimensions()
            .unwrap()
    }

    #[test]
    fn an_image_within_the_budget_is_left_alone() {
        let data = png(DynamicImage::ImageLuma8(GrayImage::new(1568, 10)));
        assert_eq!(
            fit(&data),
            Fit::AsIs {
                size: Some((1568, 10))
            }
        );
    }

    #[test]
    fn a_large_png_is_downscaled_keeping_its_aspect_ratio() {
        let data = png(DynamicImage::ImageRgb8(RgbImage::new(4000, 3000)));
        let Fit::Downscaled {
            mime,
            data: small,
            size,
            from,
        } = fit(&data)
        else {
            panic!("not downscaled")
        };
        assert_eq!(
            (mime, size, from),
            ("image/png", (1568, 1176), (4000, 3000))
        );
        assert_eq!(size_of(&small), (1568, 1176));
    }

    #[test]
    fn a_large_jpeg_stays_a_jpeg() {
        let big = DynamicImage::ImageRgb8(RgbImage::from_fn(2000, 500, |x, y| {
            image::Rgb([x as u8, y as u8, 7])
        }));
        let data = encode(&big, ImageFormat::Jpeg).unwrap();
        let Fit::Downscaled {
            mime,
            data: small,
            size,
            ..
        } = fit(&data)
        else {
            panic!("not downscaled")
        };
        assert_eq!((mime, size), ("image/jpeg", (1568, 392)));
        assert_eq!(&small[..2], &[0xff, 0xd8]);
    }

    #[test]
    fn noise_is_shrunk_until_it_fits_the_bytes() {
        let mut seed = 1u32;
        let noise = RgbImage::from_fn(1000, 1000, |_, _| {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            let b = seed.to_le_bytes();
            image::Rgb([b[0], b[1], b[2]])
        });
        let data = png(DynamicImage::ImageRgb8(noise));
        assert!(data.len() > IMAGE_MAX_BYTES);
        let Fit::Downscaled {
            data: small, size, ..
        } = fit(&data)
        else {
            panic!("not downscaled")
        };
        assert!(small.len() <= IMAGE_MAX_BYTES, "{}", small.len());
        assert!(size.0 < 1000 && size.0 == size.1, "{size:?}");
    }

    fn crc32(bytes: &[u8]) -> u32 {
        let mut c = !0u32;
        for &b in bytes {
            c ^= u32::from(b);
            for _ in 0..8 {
                c = (c >> 1) ^ (0xedb8_8320 & (c & 1).wrapping_neg());
            }
        }
        !c
    }

    /// A valid 1×1 PNG whose header then says it is `w`×`h`.
    fn bomb(w: u32, h: u32) -> Vec<u8> {
        let mut data = png(DynamicImage::ImageLuma8(GrayImage::new(1, 1)));
        data[16..20].copy_from_slice(&w.to_be_bytes());
        data[20..24].copy_from_slice(&h.to_be_bytes());
        let crc = crc32(&data[12..29]);
        data[29..33].copy_from_slice(&crc.to_be_bytes());
        data
    }

    #[test]
    fn a_huge_declared_size_is_refused_before_decoding() {
        for side in [100_000, 16_000] {
            assert_eq!(
                fit(&bomb(side, side)),
                Fit::Refused {
                    size: Some((side, side)),
                    why:
                        "it is over what this host decodes: 16,384 px a side and 256 MiB of pixels"
                            .into()
                }
            );
        }
    }

    #[test]
    fn a_truncated_image_is_refused() {
        assert_eq!(
            fit(&bomb(2000, 1000)),
            Fit::Refused {
                size: Some((2000, 1000)),
                why: "it does not decode: Format error decoding Png: IDAT or fDAT chunk does not have enough data for image."
                    .into()
            }
        );
    }

    #[test]
    fn other_formats_pass_when_small_and_are_refused_when_large() {
        assert_eq!(fit(b"GIF89a tiny"), Fit::AsIs { size: None });
        let big = [b"GIF89a".as_slice(), &vec![0u8; IMAGE_MAX_BYTES]].concat();
        assert_eq!(
            fit(&big),
            Fit::Refused {
                size: None,
                why: "it is not a PNG or JPEG".into()
            }
        );
    }
}
