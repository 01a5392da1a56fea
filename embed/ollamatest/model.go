package ollamatest

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"os"

	"github.com/ollama/ollama/fs/ggml"
)

// ModelSpec shapes the model WriteModel writes. Zero values take defaults.
type ModelSpec struct {
	Layers        int    // encoder blocks; 1 if zero
	ContextLength int    // tokens the model reads; longer input is truncated by the server; 128 if zero
	FeedForward   int    // width of each block's feed-forward layer; 256 if zero
	Seed          uint64 // the weights are drawn from it; the same seed writes the same file
}

// The width of the model's output, as nomic-embed-text's: the catalog
// stores vector(768).
const (
	hiddenSize = 768
	headCount  = 12
)

// Special tokens, in the order of BERT's vocabulary.
const (
	tokenPad = iota
	tokenUnknown
	tokenCLS
	tokenSep
	tokenMask
)

// wordPiece marks a token that starts a word in GGML vocabularies
// (BERT's own vocabulary marks the pieces inside a word instead).
const wordPiece = "\u2581"

// vocabularyWords are whole-word tokens; any other ASCII word is spelt
// with the letter tokens, so no text becomes [UNK] but non-ASCII words.
var vocabularyWords = []string{
	"search", "document", "query", "a", "an", "the", "of", "in", "on", "at", "and", "with", "to", "by",
	"person", "people", "man", "woman", "child", "city", "street", "night", "day", "sunset", "beach",
	"ocean", "water", "forest", "mountain", "snow", "rain", "car", "road", "traffic", "office", "team",
	"meeting", "laptop", "phone", "coffee", "food", "kitchen", "cooking", "running", "walking", "dog",
	"cat", "bird", "sky", "cloud", "clouds", "aerial", "drone", "shot", "view", "slow", "motion",
	"time", "lapse", "close", "up", "smiling", "camera", "business", "nature", "sports", "music",
}

// vocabulary returns the tokens, in id order: the special ones, then
// every printable ASCII character as a word start and every letter and
// digit as a word piece, then vocabularyWords.
func vocabulary() []string {
	tokens := []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}
	for c := byte('!'); c <= '~'; c++ {
		tokens = append(tokens, wordPiece+string(c))
	}
	for c := byte('!'); c <= '~'; c++ {
		if c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			tokens = append(tokens, string(c))
		}
	}
	for _, w := range vocabularyWords {
		if len(w) > 1 {
			tokens = append(tokens, wordPiece+w)
		}
	}
	return tokens
}

// WriteModel writes a GGUF file of Ollama's nomic-bert architecture (the
// one nomic-embed-text is served with): a WordPiece vocabulary, random
// weights drawn from spec.Seed, mean pooling and normalised 768-wide
// output. Its vectors mean nothing; the server that runs it is real.
func WriteModel(path string, spec ModelSpec) error {
	if spec.Layers <= 0 {
		spec.Layers = 1
	}
	if spec.ContextLength <= 0 {
		spec.ContextLength = 128
	}
	if spec.FeedForward <= 0 {
		spec.FeedForward = 256
	}
	tokens := vocabulary()
	types := make([]int32, len(tokens))
	scores := make([]float32, len(tokens))
	for i := range tokens {
		types[i] = 1 // normal
		if i <= tokenMask {
			types[i] = 3 // control
		}
		scores[i] = -float32(i)
	}
	kv := ggml.KV{
		"general.architecture":         "nomic-bert",
		"general.name":                 "broll test embedder",
		"general.file_type":            uint32(0), // all F32
		"general.quantization_version": uint32(2),
		"block_count":                  uint32(spec.Layers),
		"context_length":               uint32(spec.ContextLength),
		"embedding_length":             uint32(hiddenSize),
		"feed_forward_length":          uint32(spec.FeedForward),
		"attention.head_count":         uint32(headCount),
		"attention.layer_norm_epsilon": float32(1e-12),
		"attention.causal":             false,
		"rope.freq_base":               float32(1000),
		"pooling_type":                 uint32(1), // mean
		"normalize_embeddings":         true,

		"tokenizer.ggml.model":              "bert",
		"tokenizer.ggml.tokens":             tokens,
		"tokenizer.ggml.scores":             scores,
		"tokenizer.ggml.token_type":         types,
		"tokenizer.ggml.token_type_count":   uint32(2),
		"tokenizer.ggml.bos_token_id":       uint32(tokenCLS),
		"tokenizer.ggml.eos_token_id":       uint32(tokenSep),
		"tokenizer.ggml.cls_token_id":       uint32(tokenCLS),
		"tokenizer.ggml.separator_token_id": uint32(tokenSep),
		"tokenizer.ggml.padding_token_id":   uint32(tokenPad),
		"tokenizer.ggml.unknown_token_id":   uint32(tokenUnknown),
		"tokenizer.ggml.mask_token_id":      uint32(tokenMask),
		"tokenizer.ggml.add_bos_token":      true,
		"tokenizer.ggml.add_eos_token":      true,
	}

	h, ff := uint64(hiddenSize), uint64(spec.FeedForward)
	scale := float32(math.Sqrt(3) * 0.02) // uniform with a standard deviation of 0.02
	ts := []*ggml.Tensor{
		randomTensor(spec.Seed, "token_embd.weight", 1, h, uint64(len(tokens))),
		randomTensor(spec.Seed, "token_types.weight", 1, h, 2),
		constTensor("token_embd_norm.weight", 1, h),
		constTensor("token_embd_norm.bias", 0, h),
	}
	for i := range spec.Layers {
		blk := func(name string) string { return fmt.Sprintf("blk.%d.%s", i, name) }
		ts = append(ts,
			randomTensor(spec.Seed, blk("attn_qkv.weight"), scale, h, 3*h),
			randomTensor(spec.Seed, blk("attn_output.weight"), scale, h, h),
			constTensor(blk("attn_output_norm.weight"), 1, h),
			constTensor(blk("attn_output_norm.bias"), 0, h),
			randomTensor(spec.Seed, blk("ffn_gate.weight"), scale, h, ff),
			randomTensor(spec.Seed, blk("ffn_up.weight"), scale, h, ff),
			randomTensor(spec.Seed, blk("ffn_down.weight"), scale, ff, h),
			constTensor(blk("layer_output_norm.weight"), 1, h),
			constTensor(blk("layer_output_norm.bias"), 0, h),
		)
	}

	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := ggml.WriteGGUF(f, kv, ts); err != nil {
		return errors.Join(fmt.Errorf("write %s: %w", path, err), f.Close())
	}
	return f.Close()
}

// f32Data is a tensor's F32 values, made as they are written.
type f32Data struct {
	n     uint64
	value func() float32
}

func (d f32Data) WriteTo(w io.Writer) (int64, error) {
	bw := bufio.NewWriterSize(w, 1<<16)
	var buf [4]byte
	for range d.n {
		binary.LittleEndian.PutUint32(buf[:], math.Float32bits(d.value()))
		if _, err := bw.Write(buf[:]); err != nil {
			return 0, err
		}
	}
	return int64(d.n) * 4, bw.Flush()
}

func tensor(name string, data func(n uint64) io.WriterTo, shape ...uint64) *ggml.Tensor {
	n := uint64(1)
	for _, s := range shape {
		n *= s
	}
	return &ggml.Tensor{Name: name, Kind: 0 /* F32 */, Shape: shape, WriterTo: data(n)}
}

// randomTensor draws uniform values in [-scale, scale] from a generator
// seeded with seed and the tensor's name, so each tensor's values are the
// same whatever order they are written in.
func randomTensor(seed uint64, name string, scale float32, shape ...uint64) *ggml.Tensor {
	h := fnv.New64a()
	h.Write([]byte(name))
	return tensor(name, func(n uint64) io.WriterTo {
		rng := rand.New(rand.NewPCG(seed, h.Sum64()))
		return f32Data{n: n, value: func() float32 { return (2*rng.Float32() - 1) * scale }}
	}, shape...)
}

func constTensor(name string, v float32, shape ...uint64) *ggml.Tensor {
	return tensor(name, func(n uint64) io.WriterTo {
		return f32Data{n: n, value: func() float32 { return v }}
	}, shape...)
}
