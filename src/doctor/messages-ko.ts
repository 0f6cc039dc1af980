import { formatBytes } from "../format.js";
import type { DoctorMessages } from "./messages-en.js";

/** doctor's text in Korean (`doctor --lang ko`); its JSON stays English. */
export const doctorKo: DoctorMessages = {
  names: {
    config: "설정",
    "data folder": "데이터 폴더",
    "readable folders": "읽는 폴더",
    "time zone": "시간대",
    "export/metrics key": "내보내기·성과 키",
    "recommend key": "추천 키",
  },
  line: (ok, name, detail) => `${ok ? "통과" : "실패"}  ${name}: ${detail}`,
  allPassed: (version) => `모든 검사를 통과했습니다 (crm-insights-mcp ${version}).`,
  someFailed: (version) =>
    `일부 검사가 실패했습니다 (crm-insights-mcp ${version}). 실패한 줄을 고친 뒤 doctor를 다시 실행하세요.`,
  sandboxMode:
    "내장 샌드박스 모드 (CRM_BASE_URL 없음): 합성 데이터이며 키가 필요 없습니다. 실제 서비스를 쓰려면 CRM_BASE_URL, CRM_APPLICATION_ID, CRM_SECRET_KEY를 설정하세요.",
  remoteMode: (baseUrl, realtime, app, recommendUnset) =>
    `원격 모드: ${baseUrl}${realtime === undefined ? "" : `, 추천은 ${realtime}`}, 애플리케이션 ${app}${recommendUnset ? ". CRM_RECOMMEND_SECRET_KEY가 없어 추천에도 CRM_SECRET_KEY를 씁니다" : ""}.`,
  notWritable: (folder, code) =>
    `${folder}에 쓸 수 없습니다 (${code}). CRM_DATA_DIR를 쓰기 가능한 폴더로 설정하세요.`,
  writable: (folder, sandbox, usage, limits) => {
    const kept = [
      limits.maxAgeDays > 0 ? `${limits.maxAgeDays}일` : "기간 제한 없음",
      limits.maxBytes > 0 ? `모두 합쳐 ${formatBytes(limits.maxBytes)}` : "크기 제한 없음",
    ].join(", ");
    const apart = sandbox ? " (샌드박스 데이터, 실제 내보내기와 따로 보관)" : "";
    return `${folder}${apart}: 쓰기 가능. 내보내기 파일 ${usage.files}개, ${formatBytes(usage.bytes)}. 보관 기준: ${kept} (CRM_RETENTION_DAYS, CRM_RETENTION_MB).`;
  },
  readableFolders: (dataFolder, readDirs, roots) => {
    const where =
      readDirs.length === 0
        ? `데이터 폴더(${dataFolder})의 파일만 읽습니다. 다운로드 폴더 같은 다른 폴더도 읽게 하려면 CRM_READ_DIRS에 추가하세요 (절대 경로, 쉼표로 구분)`
        : `데이터 폴더(${dataFolder})와 ${readDirs.join(", ")} (CRM_READ_DIRS)의 파일을 읽습니다`;
    const clientRoots = roots
      ? ". stdio 연결에서는 클라이언트가 MCP 루트로 알려 주는 폴더도 읽고 (CRM_READ_ROOTS), HTTP 연결에서는 읽지 않습니다"
      : "";
    return `summarize_export와 query_export는 ${where}${clientRoots}.`;
  },
  readDirUnreadable: (folder, code) =>
    `${folder} (CRM_READ_DIRS): 읽을 수 없습니다 (${code}). 권한을 고치거나 CRM_READ_DIRS에서 빼세요.`,
  zoneByDefault: "기본값 (서비스 콘솔의 애플리케이션 시간대가 다르면 CRM_TIME_ZONE을 설정하세요)",
  zoneFromEnv: "CRM_TIME_ZONE 값",
  zoneUnusable: (zone, why) =>
    `${zone}: 이 환경에서 쓸 수 없습니다 (${why}). CRM_TIME_ZONE을 Asia/Seoul 같은 IANA 시간대로 설정하세요.`,
  invalid: "올바르지 않음",
  zoneOk: (zone, source, now, offset) =>
    `${zone}, ${source}: 현재 ${now} (UTC${offset}). 내보내기 날짜는 이 시간대의 날짜로 읽습니다.`,
  embeddedSandbox: (url) => `내장 샌드박스 (${url})`,
  exportKeyOk: (label, app, day, campaigns) =>
    `${label}: ${app === undefined ? "자체 키" : `애플리케이션 ${app}의 CRM_SECRET_KEY`}를 받아들였습니다 (${day} 캠페인 성과: 캠페인 ${campaigns}개).`,
  recommendKeyOk: (label) => `${label}: 추천 키를 받아들였습니다.`,
  recommendKeyNotRefused: (label) =>
    `${label}: 추천 키를 거부하지 않았습니다 (확인용 슬롯이 "인증 실패"가 아니라 "없는 슬롯"으로 답했습니다).`,
  refused: (label, variable, which) => {
    const check =
      which === "export"
        ? " CRM_APPLICATION_ID의 키인지도 확인하세요 (내보내기와 성과 조회 키는 담당 매니저가 발급합니다)."
        : variable === "CRM_SECRET_KEY"
          ? " CRM_RECOMMEND_SECRET_KEY가 없어 추천을 CRM_SECRET_KEY로 시도했습니다. 추천에 애플리케이션 자체의 시크릿 키가 필요하다면 CRM_RECOMMEND_SECRET_KEY에 설정하세요."
          : " 이 키는 애플리케이션의 시크릿 키이며, 설정하지 않으면 CRM_SECRET_KEY를 씁니다.";
    return `${label}: ${variable}의 키를 ${which === "recommend" ? "추천에서 " : ""}거부했습니다 (인증 실패). 키 전체가 복사되었는지 확인하세요.${check}`;
  },
  unknownApplication: (label) =>
    `${label}: 애플리케이션을 찾을 수 없습니다. CRM_APPLICATION_ID를 확인하세요.`,
  unreachable: (label, message, variable) =>
    `${label}에 연결하지 못했습니다 (${message}). URL(${variable}), 네트워크, 프록시를 확인하세요.`,
  answeredError: (label, message) => `${label}: 오류로 응답했습니다: ${message}`,
};
