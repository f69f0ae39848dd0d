/*
 * ps-live: incremental speech recognition with Debian's libpocketsphinx (0.8+5prealpha), for
 * live transcription. One process per stream; the transcription service talks to it over pipes
 * (src/live/live-recognizer.ts).
 *
 *   ps-live -hmm DIR -lm FILE -dict FILE [-vad_threshold X] [-partial_ms N] [other decoder args]
 *
 * stdin is framed: 1 byte type ('A' audio, 'F' finalize), 4-byte little-endian length, payload
 * (for 'A': 16 kHz mono s16le PCM of any byte length; an odd byte is carried to the next frame).
 * EOF ends the stream: the current utterance is flushed and the process exits 0.
 *
 * stdout: one JSON object per line, flushed at once; times are seconds from the stream's start.
 *   {"type":"ready"}                                   the decoder is loaded
 *   {"type":"speech_started","at":S}                   the voice activity detector turned on
 *   {"type":"partial","text":"...","start":S,"end":S}  the hypothesis so far, when it changed
 *   {"type":"final","start":S,"end":S,"words":[["word",start,end,confidence],...]}
 *   {"type":"utterance_end","at":S}                    after every utterance (its final may be
 *                                                      omitted when it has no words)
 * Errors go to stderr with a non-zero exit. The decoder's own log goes to -logfn (/dev/null
 * unless given): it would otherwise flood stderr with its configuration.
 *
 * Times: ps_start_stream() makes ps_seg_frames() stream-wide (silence the detector removed
 * included), so word times need no per-utterance offset; checked with speech, 5 s of silence,
 * speech (the second utterance's words start after 8 s).
 */
#include <pocketsphinx.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SAMPLE_RATE 16000
/* Samples per ps_process_raw call (32 ms): detector turns are seen within one such step. */
#define STEP 512

static ps_decoder_t *ps;
static double frate;          /* feature frames per second (-frate, 100) */
static int prespeech;         /* frames the detector keeps before the speech it detects */
static long partial_every;    /* samples of audio between two partial checks */
static long total;            /* samples processed since the stream's start */
static int speaking;          /* the detector turned on in the current utterance */
static double speech_at;      /* where it did (seconds) */
static double last_end;       /* where the last utterance ended: the next one starts no earlier */
static long next_partial;     /* the sample count after which the next partial may go out */
static char *last_hyp;        /* the last partial sent (to send only changes) */

static void die(const char *msg)
{
    fprintf(stderr, "ps-live: %s\n", msg);
    exit(1);
}

/* Writes s as a JSON string. */
static void json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') printf("\\%c", c);
        else if (c < 0x20) printf("\\u%04x", c);
        else putchar(c);
    }
    putchar('"');
}

static void end_line(void)
{
    putchar('\n');
    if (fflush(stdout) != 0) die("cannot write stdout");
}

/* Fillers and markers that are not words: <s>, </s>, <sil>, [NOISE], ++UH++ (as engines/pocketsphinx.ts). */
static int is_filler(const char *w)
{
    size_t n = strlen(w);
    if (n < 2) return 0;
    if ((w[0] == '<' && w[n - 1] == '>') || (w[0] == '[' && w[n - 1] == ']')) return 1;
    return n >= 4 && strncmp(w, "++", 2) == 0 && strcmp(w + n - 2, "++") == 0;
}

/* The next real word from it on (fillers skipped, "(2)" marks cut into word), or NULL. */
static ps_seg_t *next_word(ps_seg_t *it, char *word, size_t size)
{
    for (; it; it = ps_seg_next(it)) {
        snprintf(word, size, "%s", ps_seg_word(it));
        if (is_filler(word)) continue;
        char *mark = strrchr(word, '(');   /* alternate pronunciation: "was(2)" */
        if (mark && mark != word && word[strlen(word) - 1] == ')') *mark = '\0';
        return it;
    }
    return NULL;
}

/*
 * The time of a frame, no earlier than the last utterance's end: after a finalize the detector's
 * pre-speech buffer hands the next utterance a few frames the last one decoded already (~50 ms).
 */
static double seconds_at(int frame)
{
    return fmax(last_end, frame / frate);
}

/* Ends the decoder's utterance; sends its final (when it has words) and utterance_end; starts the next. */
static void end_utterance(void)
{
    if (ps_end_utt(ps) < 0) die("ps_end_utt failed");
    if (speaking) {
        char word[256];
        int sf, ef, words = 0;
        double start = 0, end = -1;
        /* First pass: the words' span (with none, the end of the utterance's last filler). */
        for (ps_seg_t *it = ps_seg_iter(ps); it; it = ps_seg_next(it)) {
            ps_seg_frames(it, &sf, &ef);
            snprintf(word, sizeof word, "%s", ps_seg_word(it));
            if (!is_filler(word) && words++ == 0) start = seconds_at(sf);
            if (!is_filler(word) || words == 0) end = seconds_at(ef);
        }
        if (words > 0) {
            /* Second pass: the words, confidence = posterior (as pocketsphinx_continuous -time yes). */
            printf("{\"type\":\"final\",\"start\":%.3f,\"end\":%.3f,\"words\":[", start, end);
            int n = 0;
            for (ps_seg_t *it = ps_seg_iter(ps); (it = next_word(it, word, sizeof word)) != NULL; it = ps_seg_next(it)) {
                ps_seg_frames(it, &sf, &ef);
                double conf = logmath_exp(ps_get_logmath(ps), ps_seg_prob(it, NULL, NULL, NULL));
                conf = isfinite(conf) ? fmin(1, fmax(0, conf)) : 0;
                printf("%s[", n++ ? "," : "");
                json_string(word);
                printf(",%.3f,%.3f,%.4f]", seconds_at(sf), seconds_at(ef), conf);
            }
            printf("]}");
            end_line();
        }
        if (end < 0) end = (double)total / SAMPLE_RATE;
        last_end = end;
        printf("{\"type\":\"utterance_end\",\"at\":%.3f}", end);
        end_line();
    }
    speaking = 0;
    free(last_hyp);
    last_hyp = NULL;
    if (ps_start_utt(ps) < 0) die("ps_start_utt failed");
}

/* Decodes n samples, following the detector: speech_started, partials, and finals when it turns off. */
static void process(const int16 *pcm, size_t n)
{
    for (size_t i = 0; i < n; i += STEP) {
        size_t k = n - i < STEP ? n - i : STEP;
        if (ps_process_raw(ps, pcm + i, k, FALSE, FALSE) < 0) die("ps_process_raw failed");
        total += (long)k;
        int in_speech = ps_get_in_speech(ps);
        if (in_speech && !speaking) {
            speaking = 1;
            speech_at = fmax(last_end, (double)total / SAMPLE_RATE - prespeech / frate);
            next_partial = total + partial_every;
            printf("{\"type\":\"speech_started\",\"at\":%.3f}", speech_at);
            end_line();
        } else if (!in_speech && speaking) {
            end_utterance();
        } else if (speaking && total >= next_partial) {
            next_partial = total + partial_every;
            const char *hyp = ps_get_hyp(ps, NULL);
            if (hyp && *hyp && (!last_hyp || strcmp(hyp, last_hyp) != 0)) {
                free(last_hyp);
                last_hyp = strdup(hyp);
                printf("{\"type\":\"partial\",\"text\":");
                json_string(hyp);
                printf(",\"start\":%.3f,\"end\":%.3f}", speech_at, (double)total / SAMPLE_RATE);
                end_line();
            }
        }
    }
}

/* Reads exactly n bytes; 0 at a clean EOF before the first byte, -1 at EOF after it. */
static int read_exact(void *buf, size_t n)
{
    size_t got = fread(buf, 1, n, stdin);
    if (got == n) return 1;
    if (ferror(stdin)) die("cannot read stdin");
    return got == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    /* Our own -partial_ms comes out; the rest goes to the decoder, with -logfn /dev/null by default. */
    char **args = calloc((size_t)argc + 2, sizeof *args);
    int nargs = 0, has_logfn = 0;
    long partial_ms = 250;
    if (!args) die("out of memory");
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-partial_ms") == 0 && i + 1 < argc) {
            partial_ms = strtol(argv[++i], NULL, 10);
            if (partial_ms <= 0) die("-partial_ms must be a positive number");
            continue;
        }
        if (strcmp(argv[i], "-logfn") == 0) has_logfn = 1;
        args[nargs++] = argv[i];
    }
    if (!has_logfn) {
        args[nargs++] = "-logfn";
        args[nargs++] = "/dev/null";
    }
    cmd_ln_t *config = cmd_ln_parse_r(NULL, ps_args(), nargs, args, TRUE);
    if (!config) die("bad arguments (see pocketsphinx_continuous -help)");
    ps_default_search_args(config);
    ps = ps_init(config);
    if (!ps) die("cannot load the decoder (check -hmm, -lm and -dict)");
    frate = cmd_ln_int32_r(config, "-frate");
    prespeech = cmd_ln_int32_r(config, "-vad_prespeech");
    partial_every = partial_ms * SAMPLE_RATE / 1000;
    if (ps_start_stream(ps) < 0 || ps_start_utt(ps) < 0) die("cannot start the decoder");
    printf("{\"type\":\"ready\"}");
    end_line();

    static unsigned char buf[1 + 2 * 8192];  /* a carried odd byte, then up to 8192 samples */
    int16 pcm[8192];
    size_t carry = 0;                        /* 0 or 1 byte held in buf[0] */
    unsigned char head[5];
    int r;
    while ((r = read_exact(head, sizeof head)) == 1) {
        unsigned long len = head[1] | head[2] << 8 | head[3] << 16 | (unsigned long)head[4] << 24;
        if (head[0] != 'A' && head[0] != 'F') die("unknown frame type");
        while (len > 0) {
            size_t want = len < sizeof buf - carry ? len : sizeof buf - carry;
            if (read_exact(buf + carry, want) != 1) die("stdin ended inside a frame");
            len -= want;
            if (head[0] != 'A') continue;      /* a finalize frame's payload means nothing */
            size_t bytes = carry + want, samples = bytes / 2;
            for (size_t s = 0; s < samples; s++)  /* little-endian, whatever the host */
                pcm[s] = (int16)(buf[2 * s] | buf[2 * s + 1] << 8);
            process(pcm, samples);
            carry = bytes % 2;
            if (carry) buf[0] = buf[bytes - 1];
        }
        if (head[0] == 'F') end_utterance();
    }
    if (r < 0) die("stdin ended inside a frame header");
    end_utterance();
    ps_free(ps);
    cmd_ln_free_r(config);
    free(args);
    return 0;
}
