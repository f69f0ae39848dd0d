// The Record page (docs/app.md, "Record"): the microphone → MediaRecorder (Opus in WebM, 250 ms
// slices) → the API's live WebSocket (docs/live.md), opened with a listen token from
// POST /record/token. Partial words show grey and are replaced; final words are appended. Stop
// ends the recorder, sends {"type":"close"}, and waits for `closed`, which names the saved
// recording. Every refusal is shown in words with its close code: nothing fails silently.
const MIME = 'audio/webm;codecs=opus';
const TIMESLICE_MS = 250;

const form = document.getElementById('record-form');
const startButton = document.getElementById('record-start');
const stopButton = document.getElementById('record-stop');
const statusLine = document.getElementById('record-status');
const errorLine = document.getElementById('record-error');
const closedLine = document.getElementById('record-closed');
const savedBox = document.getElementById('record-saved');
const recordingId = document.getElementById('recording-id');
const charged = document.getElementById('record-charged');
const finalText = document.getElementById('final-text');
const partialText = document.getElementById('partial-text');

/** The recording in progress: its microphone, recorder and socket, and whether an error was told. */
let session = null;

function showError(text) {
  errorLine.textContent = text;
  errorLine.hidden = false;
}

function idle(status) {
  statusLine.textContent = status;
  startButton.disabled = false;
  stopButton.disabled = true;
}

/** What a refusal page of the app says (session ended, form refused): its heading and first line. */
async function refusalOf(res) {
  const doc = new DOMParser().parseFromString(await res.text(), 'text/html');
  const said = [doc.querySelector('h1'), doc.querySelector('main p')].map((el) => el && el.textContent.trim()).filter(Boolean);
  return said.length ? said.join(': ') : `The server answered ${res.status}.`;
}

/** A listen token for the signed-in person, and where to use it. */
async function listenToken() {
  const res = await fetch(form.action, {
    method: 'POST',
    body: new URLSearchParams(new FormData(form)),
    credentials: 'same-origin',
    headers: { Accept: 'application/json' },
  });
  if (!res.ok) throw new Error(await refusalOf(res));
  return res.json();
}

/** The microphone, with the reason in words when it cannot be had. */
async function microphone() {
  if (!navigator.mediaDevices || !window.MediaRecorder || !MediaRecorder.isTypeSupported(MIME)) {
    throw new Error('This browser cannot record Opus audio in WebM, which live transcription needs. Use a current Chrome, Edge or Firefox.');
  }
  try {
    return await navigator.mediaDevices.getUserMedia({ audio: true });
  } catch (err) {
    if (err && err.name === 'NotAllowedError') throw new Error('Microphone access was refused. Allow it in the browser (the icon in the address bar) and press Record again.');
    if (err && err.name === 'NotFoundError') throw new Error('No microphone was found. Connect one and press Record again.');
    throw new Error(`The microphone could not be opened: ${err && err.message ? err.message : err}`);
  }
}

function release(s) {
  if (s.recorder && s.recorder.state !== 'inactive') s.recorder.stop();
  for (const track of s.stream.getTracks()) track.stop();
}

function onMessage(s, event) {
  let m;
  try {
    m = JSON.parse(event.data);
  } catch {
    return;
  }
  if (m.type === 'open') {
    statusLine.textContent = 'Recording. Speak now.';
  } else if (m.type === 'partial') {
    partialText.textContent = m.text;
  } else if (m.type === 'final') {
    if (m.text) finalText.textContent += (finalText.textContent ? ' ' : '') + m.text;
    partialText.textContent = '';
  } else if (m.type === 'closed') {
    s.closed = m;
  } else if (m.type === 'error') {
    s.errored = true;
    const e = m.error || {};
    showError(`${e.message || 'The live stream failed.'}${e.code ? ` (${e.code})` : ''}`);
  }
}

function onClose(s, event) {
  session = null;
  release(s);
  partialText.textContent = '';
  closedLine.textContent = `Connection closed: code ${event.code}${event.reason ? ` (${event.reason})` : ''}.`;
  closedLine.hidden = false;
  if (s.closed) {
    const c = s.closed;
    if (c.recording_id) {
      recordingId.textContent = c.recording_id;
      charged.textContent = ` · ${Math.round(c.duration_seconds)} s of audio, ${c.credits_charged} ${c.credits_charged === 1 ? 'credit' : 'credits'} charged.`;
      savedBox.hidden = false;
      return idle('Saved.');
    }
    return idle('Stopped. Nothing was saved: no words were heard.');
  }
  if (!s.errored) showError(`The connection to Murmur closed unexpectedly (code ${event.code}). What was final above is kept; press Record to start again.`);
  idle('Stopped.');
}

async function start() {
  startButton.disabled = true;
  errorLine.hidden = true;
  closedLine.hidden = true;
  savedBox.hidden = true;
  finalText.textContent = '';
  partialText.textContent = '';
  statusLine.textContent = 'Starting…';
  let stream;
  try {
    stream = await microphone();
    const { token, listen_url: listenUrl } = await listenToken();
    const url = new URL(listenUrl);
    url.searchParams.set('token', token);
    url.searchParams.set('encoding', 'webm');
    url.searchParams.set('save', 'true');
    const s = { stream, socket: new WebSocket(url), recorder: null, closed: null, errored: false };
    session = s;
    s.socket.addEventListener('message', (e) => onMessage(s, e));
    s.socket.addEventListener('close', (e) => onClose(s, e));
    // The gateway reads nothing until the token is redeemed, so slices sent before `open` wait
    // in the socket and the first one, which holds the WebM header, is never lost.
    s.socket.addEventListener('open', () => {
      s.recorder = new MediaRecorder(stream, { mimeType: MIME });
      s.recorder.addEventListener('dataavailable', (e) => {
        if (e.data.size > 0 && s.socket.readyState === WebSocket.OPEN) s.socket.send(e.data);
      });
      // Sent after the recorder's last slice: the stream ends with every word spoken.
      s.recorder.addEventListener('stop', () => {
        if (s.socket.readyState === WebSocket.OPEN) s.socket.send(JSON.stringify({ type: 'close' }));
      });
      s.recorder.start(TIMESLICE_MS);
      stopButton.disabled = false;
      statusLine.textContent = 'Connecting…';
    });
  } catch (err) {
    if (stream) for (const track of stream.getTracks()) track.stop();
    session = null;
    showError(err && err.message ? err.message : String(err));
    idle('Not recording.');
  }
}

function stop() {
  const s = session;
  if (!s) return;
  stopButton.disabled = true;
  statusLine.textContent = 'Finishing the last words…';
  release(s);
}

form.addEventListener('submit', (e) => {
  e.preventDefault();
  if (!session) void start();
});
stopButton.addEventListener('click', stop);
