/**
 * Small ONNX models the diarization tests build themselves, with the inputs, outputs and
 * metadata sherpa-onnx reads (sherpa-onnx/csrc/speaker-embedding-extractor-model.cc and
 * offline-speaker-segmentation-pyannote-model.cc), because no speaker-embedding model can be
 * had on these machines (and the shared pyannote copy may be unreadable, see the tests).
 *
 * Both look at one acoustic fact: how much of a voice's energy lies below 175 Hz. A low male
 * voice (fundamental ~100 Hz) has 3–8 % of it there; a high female voice (fundamental above
 * 200 Hz) has under 0.1 %. That tells two clearly different voices apart and nothing more:
 * the models prove the path through sherpa-onnx (chunking, embedding, clustering, the times
 * it reports), never accuracy on real speech.
 */
import { onnx } from 'onnx-proto';

const FLOAT = onnx.TensorProto.DataType.FLOAT;
const INT64 = onnx.TensorProto.DataType.INT64;
const { INT, INTS } = onnx.AttributeProto.AttributeType;

type Dim = number | string;
type Attr = onnx.IAttributeProto;

const valueInfo = (name: string, dims: Dim[]): onnx.IValueInfoProto => ({
  name,
  type: { tensorType: { elemType: FLOAT, shape: { dim: dims.map((d) => (typeof d === 'string' ? { dimParam: d } : { dimValue: d })) } } },
});
const ints = (name: string, v: number[]): Attr => ({ name, type: INTS, ints: v });
const int = (name: string, v: number): Attr => ({ name, type: INT, i: v });
const node = (opType: string, input: string[], output: string, attribute: Attr[] = []): onnx.INodeProto => ({ opType, input, output: [output], attribute });
const floats = (name: string, dims: number[], values: ArrayLike<number>): onnx.ITensorProto => ({ name, dataType: FLOAT, dims, floatData: Array.from(values) });
const int64s = (name: string, values: number[]): onnx.ITensorProto => ({ name, dataType: INT64, dims: [values.length], int64Data: values });

function encodeModel(graph: onnx.IGraphProto, metadata: Record<string, string | number>): Uint8Array {
  const model = onnx.ModelProto.fromObject({
    irVersion: 8,
    opsetImport: [{ domain: '', version: 13 }],
    producerName: 'murmur-tests',
    graph,
    metadataProps: Object.entries(metadata).map(([key, value]) => ({ key, value: String(value) })),
  });
  return onnx.ModelProto.encode(model).finish();
}

/** Kaldi's mel scale, as sherpa-onnx's fbank (kaldi-native-fbank) computes it. */
const mel = (hz: number) => 1127 * Math.log(1 + hz / 700);

/** Mel bins (of sherpa's 80, 20 Hz – 8 kHz) whose centre lies below `hz`. */
function melBinsBelow(hz: number, bins = 80, low = 20, high = 8000): number {
  const step = (mel(high) - mel(low)) / (bins + 1);
  let n = 0;
  while (n < bins && mel(low) + (n + 1) * step < mel(hz)) n++;
  return n;
}

/**
 * A stand-in for a 3D-Speaker embedding model (framework "3d-speaker": input `x` [N, T, 80]
 * log-mel fbank, output `embedding` [N, 2]). The embedding is a point on the unit circle at
 * an angle proportional to ln(energy below 175 Hz / all energy) over the whole stretch, so
 * one voice lands near one angle and a much higher voice about two radians away (cosine
 * distance > 1), far past sherpa's clustering threshold. Unlike the real CAM++ it declares no
 * `feature_normalize_type`, since global-mean normalisation would erase the level it reads.
 * `omitMetadata` leaves keys out, for the failure tests.
 */
export function standInEmbeddingModel(opts: { omitMetadata?: string[] } = {}): Uint8Array {
  const low = melBinsBelow(175);
  const lowMask = Array.from({ length: 80 }, (_, k) => (k < low ? 1 : 0));
  const nodes = [
    node('Exp', ['x'], 'power'), // [N, T, 80]
    node('ReduceSum', ['power', 'axis_time'], 'spectrum', [int('keepdims', 0)]), // [N, 80]
    node('Mul', ['spectrum', 'low_mask'], 'low_spectrum'),
    node('ReduceSum', ['low_spectrum', 'axis_bins'], 'low'), // [N, 1]
    node('ReduceSum', ['spectrum', 'axis_bins'], 'all'),
    node('Add', ['low', 'tiny'], 'low_safe'),
    node('Div', ['low_safe', 'all'], 'share'),
    node('Log', ['share'], 'log_share'),
    node('Mul', ['log_share', 'radians_per_nat'], 'angle'),
    node('Cos', ['angle'], 'cos'),
    node('Sin', ['angle'], 'sin'),
    node('Concat', ['cos', 'sin'], 'embedding', [int('axis', 1)]), // [N, 2]
  ];
  return encodeModel(
    {
      name: 'stand-in-speaker-embedding',
      node: nodes,
      initializer: [
        int64s('axis_time', [1]),
        int64s('axis_bins', [1]),
        floats('low_mask', [80], lowMask),
        floats('tiny', [1], [1e-6]),
        floats('radians_per_nat', [1], [0.5]),
      ],
      input: [valueInfo('x', ['N', 'T', 80])],
      output: [valueInfo('embedding', ['N', 2])],
    },
    Object.fromEntries(
      Object.entries({ framework: '3d-speaker', language: 'English', sample_rate: 16000, output_dim: 2, normalize_samples: 1, comment: 'murmur test stand-in: energy below 175 Hz, not a speaker model' }).filter(
        ([key]) => !opts.omitMetadata?.includes(key),
      ),
    ),
  );
}

/** pyannote segmentation-3.0's frame grid: 991-sample receptive field, a frame every 270 samples. */
const RECEPTIVE_FIELD = 991;
const FRAME_SHIFT = 270;
/** DFT bins of the segmentation stand-in: 50 Hz to 4 kHz, every 50 Hz. */
const DFT_HZ = Array.from({ length: 80 }, (_, i) => 50 * (i + 1));

/**
 * A stand-in for pyannote segmentation-3.0 as sherpa-onnx exports it (input `x` [N, 1, T] at
 * 16 kHz, output `y` [N, frames, 7]: log-probabilities of the powerset classes ∅, {1}, {2},
 * {3}, {1,2}, {1,3}, {2,3} on the same 270-sample frame grid, with the same metadata). Per
 * frame it measures the power at 80 frequencies (a Hann-windowed DFT as a strided
 * convolution), calls the frame speech when its power (over ±2 frames) is above a fixed level,
 * and gives speech to local speaker 1 when more than 0.5 % of the power over ±0.25 s lies
 * below 175 Hz, to local speaker 2 otherwise. Never two speakers at once.
 */
export function standInSegmentationModel(): Uint8Array {
  const n = RECEPTIVE_FIELD;
  const weights = new Float32Array(2 * DFT_HZ.length * n);
  DFT_HZ.forEach((hz, k) => {
    for (let i = 0; i < n; i++) {
      const hann = 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / (n - 1));
      const phase = (2 * Math.PI * hz * i) / 16_000;
      weights[k * n + i] = hann * Math.cos(phase);
      weights[(DFT_HZ.length + k) * n + i] = hann * Math.sin(phase);
    }
  });
  // Column 0 sums the power below 175 Hz, column 1 all of it.
  const bands = new Float32Array(DFT_HZ.length * 2);
  DFT_HZ.forEach((hz, k) => {
    bands[k * 2] = hz < 175 ? 1 : 0;
    bands[k * 2 + 1] = 1;
  });
  const nodes = [
    node('Conv', ['x', 'dft'], 'spectrum', [ints('kernel_shape', [n]), ints('strides', [FRAME_SHIFT])]), // [N, 160, F]
    node('Mul', ['spectrum', 'spectrum'], 'squares'),
    node('Reshape', ['squares', 'split_shape'], 'squares_split'), // [N, 2, 80, F]
    node('ReduceSum', ['squares_split', 'axis_1'], 'power', [int('keepdims', 0)]), // [N, 80, F]
    node('Transpose', ['power'], 'power_t', [ints('perm', [0, 2, 1])]), // [N, F, 80]
    node('MatMul', ['power_t', 'bands'], 'band_power'), // [N, F, 2]
    node('Transpose', ['band_power'], 'band_power_t', [ints('perm', [0, 2, 1])]), // [N, 2, F]
    node('AveragePool', ['band_power_t'], 'near', [ints('kernel_shape', [5]), ints('pads', [2, 2]), ints('strides', [1])]),
    node('AveragePool', ['band_power_t'], 'around', [ints('kernel_shape', [31]), ints('pads', [15, 15]), ints('strides', [1])]),
    node('Add', ['near', 'tiny'], 'near_safe'),
    node('Log', ['near_safe'], 'near_log'),
    node('Add', ['around', 'tiny'], 'around_safe'),
    node('Log', ['around_safe'], 'around_log'),
    node('Split', ['near_log'], 'near_split', [int('axis', 1)]),
    node('Split', ['around_log'], 'around_split', [int('axis', 1)]),
  ];
  // Split has two outputs; node() names one, so set both here.
  nodes[13]!.output = ['near_low_log', 'near_all_log'];
  nodes[14]!.output = ['around_low_log', 'around_all_log'];
  nodes.push(
    // speech: sigmoid(4 · (ln power − ln level)); low voice: sigmoid(4 · (ln share − ln 0.005)).
    node('Sub', ['near_all_log', 'speech_log_level'], 'speech_margin'),
    node('Mul', ['speech_margin', 'sharpness'], 'speech_logit'),
    node('Sigmoid', ['speech_logit'], 'speech'), // [N, 1, F]
    node('Sub', ['around_low_log', 'around_all_log'], 'low_share_log'),
    node('Sub', ['low_share_log', 'low_share_log_level'], 'low_margin'),
    node('Mul', ['low_margin', 'sharpness'], 'low_logit'),
    node('Sigmoid', ['low_logit'], 'low_voice'),
    node('Sub', ['one', 'speech'], 'p_silence'),
    node('Mul', ['speech', 'low_voice'], 'p_first'),
    node('Sub', ['speech', 'p_first'], 'p_second'),
    node('Mul', ['speech', 'zero'], 'p_none'),
    node('Concat', ['p_silence', 'p_first', 'p_second', 'p_none', 'p_none', 'p_none', 'p_none'], 'p', [int('axis', 1)]), // [N, 7, F]
    node('Add', ['p', 'tiny'], 'p_safe'),
    node('Log', ['p_safe'], 'log_p'),
    node('Transpose', ['log_p'], 'y', [ints('perm', [0, 2, 1])]), // [N, F, 7]
  );
  return encodeModel(
    {
      name: 'stand-in-pyannote-segmentation',
      node: nodes,
      initializer: [
        floats('dft', [2 * DFT_HZ.length, 1, n], weights),
        int64s('split_shape', [0, 2, DFT_HZ.length, -1]),
        int64s('axis_1', [1]),
        floats('bands', [DFT_HZ.length, 2], bands),
        floats('tiny', [1], [1e-9]),
        floats('one', [1], [1]),
        floats('zero', [1], [0]),
        floats('sharpness', [1], [4]),
        floats('speech_log_level', [1], [Math.log(10)]),
        floats('low_share_log_level', [1], [Math.log(0.005)]),
      ],
      input: [valueInfo('x', ['N', 1, 'T'])],
      output: [valueInfo('y', ['N', 'F', 7])],
    },
    {
      model_type: 'pyannote-segmentation-3.0',
      version: 1,
      num_speakers: 3,
      powerset_max_classes: 2,
      num_classes: 7,
      sample_rate: 16000,
      window_size: 160000,
      receptive_field_size: RECEPTIVE_FIELD,
      receptive_field_shift: FRAME_SHIFT,
      comment: 'murmur test stand-in: energy and energy below 175 Hz, not pyannote',
    },
  );
}
