import type { Channel } from "./types.js";

/** Per-channel facts of the sandbox: open-type event, labels, delivery rates, prices, failures. */

export interface ChannelProfile {
  /** Open-type event of spec 6 for this channel. */
  openEvent: string;
  /** Korean label used by scenario exports (spec 2.5). */
  label: string;
  /** Share of settled records that fail. */
  failRate: number;
  /** Share of received messages that get opened. */
  openRate: number;
  /** Price per message in KRW (cost = price x sent records); app push is free. */
  unitCost: number;
  /** Click positions inside the message, the `click_target` of landing clicks. */
  clickTargets: readonly string[];
  /** Realistic failure codes with the carrier's original text (may be long, multi-line, quoted). */
  failures: readonly (readonly [code: string, message: string])[];
}

export const CHANNEL_PROFILES: Readonly<Record<Channel, ChannelProfile>> = {
  app_push: {
    openEvent: "push_opened",
    label: "앱푸시",
    failRate: 0.07,
    openRate: 0.09,
    unitCost: 0,
    clickTargets: ["body", "image"],
    failures: [
      ["InvalidRegistration", "Invalid registration token"],
      ["NotRegistered", "Requested entity was not found."],
      ["MismatchSenderId", "SenderId mismatch"],
      ["BadDeviceToken", '{"reason":"BadDeviceToken"}'],
      [
        "Unavailable",
        "The server couldn't process the request in time, retry later.\nupstream: fcm.googleapis.com, status 503",
      ],
    ],
  },
  alimtalk: {
    openEvent: "alimtalk_button_clicked",
    label: "알림톡",
    failRate: 0.05,
    openRate: 0.13,
    unitCost: 7,
    clickTargets: ["button_1", "button_2"],
    failures: [
      [
        "3018",
        "메시지를 전송할 수 없음 (카카오톡 미사용자, 72시간 내 카카오톡 미사용, 수신 차단 등)",
      ],
      ["K105", "메시지 내용이 템플릿과 일치하지 않음"],
      ["3015", "템플릿을 찾을 수 없음"],
      [
        "3016",
        '메시지 내용이 템플릿과 일치하지 않음: 변수 "#{고객명}" 값이 비어 있습니다,\n템플릿 코드 "SPRING_SALE_01", 버튼 "바로가기"의 링크를 확인하세요.',
      ],
      ["E105", "카카오 비즈메시지 서버 응답 지연, 대체발송 실패"],
    ],
  },
  friendtalk: {
    openEvent: "friendtalk_button_clicked",
    label: "친구톡",
    failRate: 0.09,
    openRate: 0.11,
    unitCost: 13,
    clickTargets: ["button_1", "button_2", "image"],
    failures: [
      ["3019", "톡 유저가 아님 (채널 친구가 아닌 사용자)"],
      ["3008", "전화번호 오류, 수신 번호 형식이 올바르지 않음"],
      [
        "E999",
        '알 수 없는 오류 (code=E999)\n상세: "친구톡 이미지 업로드 실패", 이미지 크기 제한 500KB, 가로:세로 2:1 비율 필요',
      ],
    ],
  },
  brand_message: {
    openEvent: "brandmessage_button_clicked",
    label: "브랜드 메시지",
    failRate: 0.06,
    openRate: 0.1,
    unitCost: 17,
    clickTargets: ["button_1", "coupon"],
    failures: [
      ["BM4001", "수신 동의하지 않은 사용자"],
      ["BM4003", "발송 가능 시간이 아님 (20:50~08:00 광고 발송 제한)"],
      ["BM5000", "브랜드 메시지 시스템 오류, 잠시 후 다시 시도"],
    ],
  },
  sms: {
    openEvent: "sms_link_clicked",
    label: "SMS",
    failRate: 0.03,
    openRate: 0.04,
    unitCost: 9,
    clickTargets: ["link_1"],
    failures: [
      ["E_SPAM", "[SKT] 스팸 차단: 수신자가 스팸 필터에 등록한 번호입니다"],
      ["E_INVALID_NUMBER", "결번 또는 서비스 정지 번호"],
      [
        "E_CARRIER",
        '[KT] 전송 실패, 사유 코드 "2007"\n단말기 전원 꺼짐 또는 음영 지역, 재시도 3회 초과\n(원문: "MSG_DELIVERY_FAILED, handset unreachable")',
      ],
      ["E_TIMEOUT", "이동통신사 응답 시간 초과 (LGU+, 48시간)"],
    ],
  },
  rcs: {
    openEvent: "rcs_link_clicked",
    label: "RCS",
    failRate: 0.1,
    openRate: 0.08,
    unitCost: 14,
    clickTargets: ["link_1", "card_1", "card_2"],
    failures: [
      ["61002", "RCS 미지원 단말, 대체 문자 발송 미설정"],
      ["61100", "브랜드 승인 만료, 재승인 필요"],
      ["62001", '메시지베이스 ID 불일치, "SS000000" 템플릿을 확인하세요'],
    ],
  },
  email: {
    openEvent: "email_link_clicked",
    label: "이메일",
    failRate: 0.04,
    openRate: 0.17,
    unitCost: 1,
    clickTargets: ["link_1", "link_2", "banner"],
    failures: [
      [
        "550",
        "550-5.1.1 The email account that you tried to reach does not exist. Please try\n550-5.1.1 double-checking the recipient's email address for typos or\n550-5.1.1 unnecessary spaces. Learn more at\n550 5.1.1  https://support.google.com/mail/?p=NoSuchUser",
      ],
      ["552", '552 5.2.2 The email account that you tried to reach is over quota, "mailbox full"'],
      ["Bounce", "Hard bounce: domain does not exist, MX lookup failed"],
      ["Complaint", "Recipient marked a previous message as spam; address suppressed"],
    ],
  },
};
