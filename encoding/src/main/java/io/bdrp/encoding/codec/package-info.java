/**
 * Binary encodings of the content model: {@link io.bdrp.encoding.codec.MessageCodec} for messages
 * and {@link io.bdrp.encoding.codec.PredicateCodec} for predicates. They read and write {@link
 * java.nio.ByteBuffer}s, big-endian, with no dependency on a network library; framing is the
 * transport's job. Decoders check every field against {@link io.bdrp.encoding.Limits} and the
 * model, and report any fault as a {@link io.bdrp.encoding.codec.CodecException} with the offset of
 * the bad field. The layouts are in {@code docs/wire-encoding.md}.
 */
package io.bdrp.encoding.codec;
