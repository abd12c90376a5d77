//! A small Chinese -> English gloss of the words people use to ask for a tool, query side only.
//!
//! Tool catalogs are written in English, so a Chinese request ("给这个网页截个图") shares no
//! word with the tool that serves it (`browser_take_screenshot`); bigrams (`search_cjk`) match
//! only the rare Chinese description. The gloss adds the English of the request's common intent
//! words (actions, everyday objects of tools: 截图 -> screenshot, 网页 -> web page) as ordinary
//! query words. It is generic tool-use vocabulary, not product or catalog names, and never
//! touches the index. Its effect on the development set, tune and holdout halves apart, is in
//! BENCHMARKS.md "Chinese queries".
//!
//! Matching is greedy longest-first along the run (文件夹 before 文件), so a word is glossed
//! once; the run's bigrams stay in the query beside the gloss.

use std::collections::HashMap;
use std::sync::OnceLock;

/// Chinese word -> English words. At most `MAX_KEY_CHARS` characters a key.
const GLOSS: &[(&str, &str)] = &[
    // Actions.
    ("搜索", "search"), ("搜", "search"), ("查找", "find search"), ("查询", "query search"),
    ("查看", "view get"), ("查", "search"), ("找", "find"), ("寻找", "find"),
    ("创建", "create"), ("新建", "create new"), ("建立", "create"), ("添加", "add"),
    ("增加", "add"), ("删除", "delete"), ("删掉", "delete"), ("移除", "remove"),
    ("修改", "update edit"), ("更新", "update"), ("编辑", "edit"), ("更改", "change"),
    ("列出", "list"), ("列表", "list"), ("所有", "all list"), ("获取", "get"), ("得到", "get"),
    ("读取", "read"), ("读", "read"), ("写入", "write"), ("写进", "write"), ("写", "write"),
    ("保存", "save"), ("存", "save"), ("发送", "send"), ("发", "send"), ("打开", "open"),
    ("关闭", "close"), ("运行", "run"), ("执行", "execute run"), ("停止", "stop"),
    ("取消", "cancel"), ("上传", "upload"), ("下载", "download"), ("安装", "install"),
    ("部署", "deploy"), ("复制", "copy"), ("拷贝", "copy"), ("移动", "move"),
    ("重命名", "rename"), ("改名", "rename"), ("合并", "merge"), ("提交", "commit submit"),
    ("推送", "push"), ("拉取", "pull"), ("克隆", "clone"), ("翻译", "translate"),
    ("转换", "convert"), ("换算", "convert"), ("转成", "convert"), ("转为", "convert"),
    ("总结", "summarize"), ("摘要", "summary"), ("分析", "analyze"), ("比较", "compare"),
    ("对比", "compare"), ("点击", "click"), ("输入", "type input"), ("填写", "fill"),
    ("截图", "screenshot"), ("截屏", "screenshot"), ("截个图", "screenshot"),
    ("录屏", "screen recording"), ("录制", "record"), ("导出", "export"), ("导入", "import"),
    ("生成", "generate"), ("画", "draw chart"), ("检查", "check"), ("监控", "monitor"),
    ("登录", "login"), ("回复", "reply"), ("评论", "comment"), ("分享", "share"),
    ("退款", "refund"), ("付款", "payment"), ("支付", "payment"), ("预订", "book"),
    ("提醒", "remind"), ("安排", "schedule"), ("抓取", "scrape"), ("爬取", "crawl"),
    ("记住", "remember memory"), ("记忆", "memory"), ("思考", "think thinking"),
    ("怎么走", "directions"), ("导航", "directions navigate"), ("显示", "show"),
    ("展示", "show"), ("统计", "statistics"), ("订阅", "subscription"),
    // Objects.
    ("文件夹", "folder directory"), ("目录", "directory"), ("文件", "file"),
    ("网页", "web page"), ("页面", "page"), ("网站", "website"), ("网上", "web"),
    ("网络", "network web"), ("互联网", "internet web"), ("浏览器", "browser"),
    ("链接", "link url"), ("网址", "url"), ("邮件", "email"), ("邮箱", "email mailbox"),
    ("短信", "sms message"), ("消息", "message"), ("日历", "calendar"), ("会议", "meeting"),
    ("日程", "event schedule"), ("事件", "event"), ("时间", "time"), ("时区", "timezone"),
    ("几点", "time"), ("天气", "weather forecast"), ("下雨", "rain weather"), ("地图", "map"),
    ("地址", "address"), ("位置", "location"), ("经纬度", "latitude longitude geocode"),
    ("坐标", "coordinates"), ("路线", "route directions"), ("距离", "distance"),
    ("图片", "image"), ("照片", "photo image"), ("图像", "image"), ("视频", "video"),
    ("音频", "audio"), ("录音", "audio recording"), ("语音", "speech voice"),
    ("文字", "text"), ("文本", "text"), ("字幕", "transcript subtitles"), ("新闻", "news"),
    ("论文", "papers"), ("数据库", "database"), ("表格", "spreadsheet table"),
    ("单元格", "cells"), ("图表", "chart"), ("饼图", "pie chart"), ("折线图", "line chart"),
    ("柱状图", "bar chart"), ("代码", "code"), ("仓库", "repository"), ("分支", "branch"),
    ("缺陷", "bug issue"), ("任务", "task issue"), ("项目", "project"), ("用户", "user"),
    ("客户", "customer"), ("订单", "orders"), ("发票", "invoice"), ("价格", "price"),
    ("费用", "cost"), ("日志", "logs"), ("集群", "cluster"), ("容器", "container"),
    ("服务器", "server"), ("密码", "password"), ("权限", "permission"), ("文档", "document"),
    ("笔记", "notes"), ("按钮", "button"), ("表单", "form"), ("手机", "mobile phone"),
    ("屏幕", "screen"), ("联系人", "contacts"), ("频道", "channel"), ("模板", "template"),
    ("云端硬盘", "drive"), ("网盘", "drive"), ("有空", "free busy"), ("空闲", "free busy"),
    ("内容", "content"), ("报告", "report"), ("英文", "english"), ("英语", "english"),
    ("中文", "chinese"), ("问题", "problem issue"), ("步骤", "step"),
    ("一步一步", "step by step sequential"),
];

const MAX_KEY_CHARS: usize = 4;

fn table() -> &'static HashMap<&'static str, &'static str> {
    static T: OnceLock<HashMap<&'static str, &'static str>> = OnceLock::new();
    T.get_or_init(|| GLOSS.iter().copied().collect())
}

/// The English words glossed in a CJK `run`, greedy longest-first from its start, in order.
pub fn gloss(run: &str, mut f: impl FnMut(&str)) {
    let t = table();
    let starts: Vec<usize> = run.char_indices().map(|(i, _)| i).chain([run.len()]).collect();
    let mut i = 0;
    while i + 1 < starts.len() {
        let longest = (1..=MAX_KEY_CHARS.min(starts.len() - 1 - i))
            .rev()
            .find_map(|n| t.get(&run[starts[i]..starts[i + n]]).map(|en| (n, *en)));
        match longest {
            Some((n, en)) => {
                en.split(' ').for_each(&mut f);
                i += n;
            }
            None => i += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(run: &str) -> Vec<String> {
        let mut v = Vec::new();
        gloss(run, |w| v.push(w.to_string()));
        v
    }

    #[test]
    fn the_longest_word_wins_and_each_is_glossed_once() {
        assert_eq!(words("新建一个文件夹"), ["create", "new", "folder", "directory"]);
        assert_eq!(words("给这个网页截个图"), ["web", "page", "screenshot"]);
        assert!(words("明天北京").is_empty());
        assert!(words("").is_empty());
    }

    #[test]
    fn keys_are_unique_and_short() {
        assert_eq!(table().len(), GLOSS.len(), "a key twice");
        assert!(GLOSS.iter().all(|(k, en)| k.chars().count() <= MAX_KEY_CHARS && !en.is_empty()));
    }
}
