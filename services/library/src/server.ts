/** gRPC handlers of murmur.library.v1.LibraryService: request → service call → response. */
import { bindService, type BoundService } from '@murmur/kit';
import { library } from '@murmur/proto';
import type { LibraryService } from './service';

/** Binds every RPC of the contract to `service`; none is left UNIMPLEMENTED. */
export function libraryHandlers(service: LibraryService): BoundService {
  return bindService(library.LibraryServiceService, {
    async listRecordings(req) {
      const { items, page } = await service.listRecordings(req);
      return { recordings: items, page };
    },
    async getRecording(req) {
      return { recording: await service.getRecording(req) };
    },
    async listThoughtThreads(req) {
      const { items, page } = await service.listThoughtThreads(req);
      return { threads: items, page };
    },
    async getThoughtThread(req) {
      return { thread: await service.getThoughtThread(req) };
    },
    async listFolders(req) {
      const { items, page } = await service.listFolders(req);
      return { folders: items, page };
    },
    async getFolder(req) {
      return { folder: await service.getFolder(req) };
    },
    async listKnowledgeBases(req) {
      const { items, page } = await service.listKnowledgeBases(req);
      return { knowledgeBases: items, page };
    },
    async getLibraryStats(req) {
      return service.getLibraryStats(req);
    },
    async createRecording(req) {
      return { recording: await service.createRecording(req) };
    },
    async deleteRecording(req) {
      return { deleted: await service.deleteRecording(req) };
    },
    async setSpeakerNames(req) {
      return { recording: await service.setSpeakerNames(req) };
    },
    async updateRecording(req) {
      return { recording: await service.updateRecording(req) };
    },
    async attachTranscript(req) {
      return { recording: await service.attachTranscript(req) };
    },
    async addArtifact(req) {
      return { artifact: await service.addArtifact(req) };
    },
    async createFolder(req) {
      return { folder: await service.createFolder(req) };
    },
    async createThoughtThread(req) {
      return { thread: await service.createThoughtThread(req) };
    },
    async addThreadItem(req) {
      return { item: await service.addThreadItem(req) };
    },
    async addThreadContextSource(req) {
      return { contextSource: await service.addThreadContextSource(req) };
    },
    async createKnowledgeBase(req) {
      return { knowledgeBase: await service.createKnowledgeBase(req) };
    },
    async searchPassages(req) {
      return service.searchPassages(req);
    },
    async addKnowledgeBaseRecording(req) {
      return { knowledgeBase: await service.addKnowledgeBaseRecording(req) };
    },
  });
}
